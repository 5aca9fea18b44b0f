/** NVCF function version states (NVCF function lifecycle). */
export const FUNCTION_STATUSES = [
  'INACTIVE',
  'DEPLOYING',
  'ACTIVE',
  'DEGRADING',
  'DEGRADED',
  'ERROR',
  'DELETED',
] as const;
export type FunctionStatus = (typeof FUNCTION_STATUSES)[number];

export interface DeploymentLimits {
  minInstances: number;
  maxInstances: number;
  maxRequestConcurrency: number;
}

/**
 * A version's status follows from its deployment and the workers alive for it right now.
 * With `minInstances: 0` and no worker the version is waiting for one (DEPLOYING) but stays invocable:
 * requests wait in its queue until a worker comes (scale from zero).
 */
export function functionStatus(deployment: DeploymentLimits | null, liveWorkers: number): FunctionStatus {
  if (!deployment) return 'INACTIVE';
  if (liveWorkers === 0) return deployment.minInstances === 0 ? 'DEPLOYING' : 'DEGRADED';
  return liveWorkers < deployment.minInstances ? 'DEGRADING' : 'ACTIVE';
}

export function isInvocable(deployment: DeploymentLimits | null, status: FunctionStatus): boolean {
  if (!deployment) return false;
  if (status === 'ACTIVE' || status === 'DEGRADING') return true;
  return status === 'DEPLOYING' && deployment.minInstances === 0;
}
