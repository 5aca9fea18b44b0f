import { AppError, type FunctionStatus, functionStatus, isInvocable } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion } from '@nvcf/queue';

export interface ResolvedVersion {
  fv: FunctionVersion;
  status: FunctionStatus;
}

/**
 * Picks the version an invocation goes to. Pinned: that version, if it can be invoked. Unpinned: a
 * random invocable version, preferring ones a worker serves right now (NVCF picks at random).
 */
export async function resolveFunctionVersion(
  registry: FunctionRegistry,
  functionId: string,
  versionId: string | undefined,
): Promise<ResolvedVersion> {
  const all = await registry.versions(functionId);
  if (all.length === 0) throw new AppError('NOT_FOUND', `Function '${functionId}' not found`);
  const candidates = versionId ? all.filter((v) => v.versionId === versionId) : all;
  if (candidates.length === 0) {
    throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
  }
  const live = await registry.liveWorkers(candidates.map((v) => v.versionId));
  const resolved = candidates.map((fv, i) => ({ fv, status: functionStatus(fv.deployment, live[i]?.length ?? 0) }));
  const invocable = resolved.filter((r) => isInvocable(r.fv.deployment, r.status));
  const served = invocable.filter((r) => r.status === 'ACTIVE' || r.status === 'DEGRADING');
  const pool = served.length > 0 ? served : invocable;
  const pick = pool[Math.floor(Math.random() * pool.length)];
  if (pick) return pick;
  const status = resolved[0]?.status ?? 'INACTIVE';
  throw new AppError('INVALID_ARGUMENT', `Function id '${functionId}': ${status} function cannot be invoked`);
}
