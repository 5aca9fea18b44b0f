import type { FunctionVersion } from '@nvcf/control-store';

/**
 * Whose `containerArgs` a worker in process mode runs on its host: the versions an operator named
 * (`WORKER_FUNCTION_VERSIONS`), or else the functions of the worker's own account (`NVCF_NCA_ID`, the operator's).
 * Any account with `register_function` and `deploy_function` sets a version's command, so another account's never
 * runs on a shared host: on Kubernetes it runs in the function's own pod (sidecar mode), as NVCF runs it.
 */
export interface ProcessTrust {
  /** Named versions; empty: the account's functions. */
  versionIds: readonly string[];
  /** The operator's account. */
  ncaId: string;
}

export function mayRunProcess(trust: ProcessTrust, fv: Pick<FunctionVersion, 'versionId' | 'ncaId'>): boolean {
  if (trust.versionIds.length > 0) return trust.versionIds.includes(fv.versionId);
  return fv.ncaId === trust.ncaId;
}

/** What the worker's start-up warning says it trusts. */
export function describeProcessTrust(trust: ProcessTrust): string {
  return trust.versionIds.length > 0
    ? `the function versions in WORKER_FUNCTION_VERSIONS (${trust.versionIds.join(', ')})`
    : `the functions of account '${trust.ncaId}' (NVCF_NCA_ID) only`;
}
