import {
  accountMayUse,
  type FunctionAuthorizationStore,
  type FunctionAuthorizations,
  type FunctionRegistry,
  type FunctionVersion,
} from '@nvcf/control-store';
import { AppError, type FunctionStatus, functionStatus, isInvocable } from '@nvcf/protocol';

export interface ResolvedVersion {
  fv: FunctionVersion;
  status: FunctionStatus;
}

export interface FunctionResolver {
  /**
   * The version an invocation by account `ncaId` goes to. Only versions the account may use count (its own, or
   * those it is authorized for): another account's function is NOT_FOUND, as an unknown one.
   */
  resolve(functionId: string, versionId: string | undefined, ncaId: string): Promise<ResolvedVersion>;
  /** Whether account `ncaId` may use the version (see `resolve`); undefined when the version does not exist. */
  mayUse(functionId: string, versionId: string, ncaId: string): Promise<boolean | undefined>;
  /** Forgets a function's cached versions and authorizations (after this gateway changed them). */
  invalidate(functionId: string): void;
}

interface CachedFunction {
  until: number;
  versions: FunctionVersion[];
  live: string[][];
  parties: FunctionAuthorizations;
}

/** Bounds the cache under a flood of distinct function ids. */
const MAX_CACHED_FUNCTIONS = 10_000;

const notFound = (functionId: string, versionId: string | undefined) =>
  new AppError(
    'NOT_FOUND',
    versionId === undefined
      ? `Function '${functionId}' not found`
      : `Function '${functionId}' version '${versionId}' not found`,
  );

/**
 * Pinned: that version, if it can be invoked. Unpinned: a random invocable one, preferring served ones. Versions the
 * account may not use do not exist for it.
 */
function pick(
  functionId: string,
  versionId: string | undefined,
  found: CachedFunction | undefined,
  ncaId: string,
): ResolvedVersion {
  const usable = found?.versions.flatMap((fv, i) =>
    accountMayUse(ncaId, fv, found.parties)
      ? [{ fv, status: functionStatus(fv.deployment, found.live[i]?.length ?? 0) }]
      : [],
  );
  if (!usable || usable.length === 0) throw notFound(functionId, undefined);
  const resolved = usable.filter((r) => versionId === undefined || r.fv.versionId === versionId);
  if (resolved.length === 0) throw notFound(functionId, versionId);
  const invocable = resolved.filter((r) => isInvocable(r.fv.deployment, r.status));
  const served = invocable.filter((r) => r.status === 'ACTIVE');
  const pool = served.length > 0 ? served : invocable;
  const chosen = pool[Math.floor(Math.random() * pool.length)];
  if (chosen) return chosen;
  const status = resolved[0]?.status ?? 'INACTIVE';
  throw new AppError('INVALID_ARGUMENT', `Function id '${functionId}': ${status} function cannot be invoked`);
}

/**
 * Picks the version an invocation goes to (NVCF picks at random among deployed versions).
 *
 * Versions, live workers and authorized accounts are cached for `cacheMs`: they change at deploy and heartbeat
 * pace, while looking them up on every call cost Redis round trips and a parse of every version's JSON. A
 * refusal is never made on cached state (a worker may have come up since, an account may have been authorized),
 * and unknown functions are not cached, so a new function or a new authorization is usable at once. A removed
 * authorization is refused at once on the gateway that removed it (`invalidate`), within `cacheMs` on others.
 */
export function createFunctionResolver(
  registry: FunctionRegistry,
  authorizations: Pick<FunctionAuthorizationStore, 'get'>,
  opts: { cacheMs: number },
): FunctionResolver {
  const cache = new Map<string, CachedFunction>();

  async function lookup(functionId: string, fresh: boolean): Promise<CachedFunction | undefined> {
    const now = Date.now();
    const hit = cache.get(functionId);
    if (hit && hit.until > now && !fresh) return hit;
    // Sent in one tick: one write to Redis (auto-pipelining).
    const [versions, parties] = await Promise.all([registry.versions(functionId), authorizations.get(functionId)]);
    if (versions.length === 0) {
      cache.delete(functionId);
      return undefined;
    }
    const live = await registry.liveWorkers(versions.map((v) => v.versionId));
    const entry = { until: now + opts.cacheMs, versions, live, parties };
    if (opts.cacheMs > 0) {
      if (cache.size >= MAX_CACHED_FUNCTIONS) cache.clear();
      cache.set(functionId, entry);
    }
    return entry;
  }

  const usableBy = (found: CachedFunction | undefined, versionId: string, ncaId: string) => {
    const fv = found?.versions.find((v) => v.versionId === versionId);
    return fv && found ? accountMayUse(ncaId, fv, found.parties) : undefined;
  };

  return {
    invalidate: (functionId) => void cache.delete(functionId),
    async resolve(functionId, versionId, ncaId) {
      const cached = cache.has(functionId);
      try {
        return pick(functionId, versionId, await lookup(functionId, false), ncaId);
      } catch (err) {
        if (!cached || !(err instanceof AppError)) throw err;
        return pick(functionId, versionId, await lookup(functionId, true), ncaId);
      }
    },
    async mayUse(functionId, versionId, ncaId) {
      const cached = cache.has(functionId);
      const first = usableBy(await lookup(functionId, false), versionId, ncaId);
      if (first === true || !cached) return first;
      return usableBy(await lookup(functionId, true), versionId, ncaId);
    },
  };
}
