import { AppError, type FunctionStatus, functionStatus, isInvocable } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion } from '@nvcf/queue';

export interface ResolvedVersion {
  fv: FunctionVersion;
  status: FunctionStatus;
}

export interface FunctionResolver {
  resolve(functionId: string, versionId: string | undefined): Promise<ResolvedVersion>;
  /** Forgets a function's cached versions (after this gateway changed them). */
  invalidate(functionId: string): void;
}

interface CachedFunction {
  until: number;
  versions: FunctionVersion[];
  live: string[][];
}

/** Bounds the cache under a flood of distinct function ids. */
const MAX_CACHED_FUNCTIONS = 10_000;

/** Pinned: that version, if it can be invoked. Unpinned: a random invocable one, preferring served ones. */
function pick(functionId: string, versionId: string | undefined, found: CachedFunction | undefined): ResolvedVersion {
  if (!found) throw new AppError('NOT_FOUND', `Function '${functionId}' not found`);
  const resolved = found.versions
    .map((fv, i) => ({ fv, status: functionStatus(fv.deployment, found.live[i]?.length ?? 0) }))
    .filter((r) => versionId === undefined || r.fv.versionId === versionId);
  if (resolved.length === 0) {
    throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
  }
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
 * Versions and live workers are cached for `cacheMs`: they change at deploy and heartbeat pace, while
 * looking them up on every call cost two Redis round trips and a parse of every version's JSON. A
 * refusal is never made on cached state (a worker may have come up since), and unknown functions are
 * not cached, so a new function is invocable at once.
 */
export function createFunctionResolver(registry: FunctionRegistry, opts: { cacheMs: number }): FunctionResolver {
  const cache = new Map<string, CachedFunction>();

  async function lookup(functionId: string, fresh: boolean): Promise<CachedFunction | undefined> {
    const now = Date.now();
    const hit = cache.get(functionId);
    if (hit && hit.until > now && !fresh) return hit;
    const versions = await registry.versions(functionId);
    if (versions.length === 0) {
      cache.delete(functionId);
      return undefined;
    }
    const live = await registry.liveWorkers(versions.map((v) => v.versionId));
    const entry = { until: now + opts.cacheMs, versions, live };
    if (opts.cacheMs > 0) {
      if (cache.size >= MAX_CACHED_FUNCTIONS) cache.clear();
      cache.set(functionId, entry);
    }
    return entry;
  }

  return {
    invalidate: (functionId) => void cache.delete(functionId),
    async resolve(functionId, versionId) {
      const cached = cache.has(functionId);
      try {
        return pick(functionId, versionId, await lookup(functionId, false));
      } catch (err) {
        if (!cached || !(err instanceof AppError)) throw err;
        return pick(functionId, versionId, await lookup(functionId, true));
      }
    },
  };
}
