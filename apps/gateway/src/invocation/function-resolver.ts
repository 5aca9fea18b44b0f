import { AppError, type FunctionStatus, functionStatus, isInvocable } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion } from '@nvcf/queue';

export interface ResolvedVersion {
  fv: FunctionVersion;
  status: FunctionStatus;
}

export interface FunctionResolver {
  resolve(functionId: string, versionId: string | undefined): Promise<ResolvedVersion>;
}

interface CachedFunction {
  until: number;
  versions: FunctionVersion[];
  live: string[][];
}

/** Bounds the cache under a flood of distinct function ids. */
const MAX_CACHED_FUNCTIONS = 10_000;

/**
 * Picks the version an invocation goes to. Pinned: that version, if it can be invoked. Unpinned: a
 * random invocable version, preferring ones a worker serves right now (NVCF picks at random).
 *
 * Versions and live workers are cached for `cacheMs`: they change at deploy and heartbeat pace, while
 * looking them up on every call cost two Redis round trips and a parse of every version's JSON.
 * Unknown functions are not cached, so a new function is invocable at once.
 */
export function createFunctionResolver(registry: FunctionRegistry, opts: { cacheMs: number }): FunctionResolver {
  const cache = new Map<string, CachedFunction>();

  async function lookup(functionId: string): Promise<CachedFunction | undefined> {
    const now = Date.now();
    const hit = cache.get(functionId);
    if (hit && hit.until > now) return hit;
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
    async resolve(functionId, versionId) {
      const found = await lookup(functionId);
      if (!found) throw new AppError('NOT_FOUND', `Function '${functionId}' not found`);
      const resolved = found.versions
        .map((fv, i) => ({ fv, status: functionStatus(fv.deployment, found.live[i]?.length ?? 0) }))
        .filter((r) => versionId === undefined || r.fv.versionId === versionId);
      if (resolved.length === 0) {
        throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
      }
      const invocable = resolved.filter((r) => isInvocable(r.fv.deployment, r.status));
      const served = invocable.filter((r) => r.status === 'ACTIVE' || r.status === 'DEGRADING');
      const pool = served.length > 0 ? served : invocable;
      const pick = pool[Math.floor(Math.random() * pool.length)];
      if (pick) return pick;
      const status = resolved[0]?.status ?? 'INACTIVE';
      throw new AppError('INVALID_ARGUMENT', `Function id '${functionId}': ${status} function cannot be invoked`);
    },
  };
}
