/**
 * NVCF function version states, exactly the values of NVCF's `FunctionDto.status` and
 * `FunctionDeploymentDto.functionStatus` (NVCF API reference, Cloud Functions management).
 */
export const FUNCTION_STATUSES = ['ACTIVE', 'DEPLOYING', 'ERROR', 'INACTIVE', 'DELETED'] as const;
export type FunctionStatus = (typeof FUNCTION_STATUSES)[number];

export interface DeploymentLimits {
  minInstances: number;
  maxInstances: number;
  maxRequestConcurrency: number;
}

/**
 * A version's status follows from its deployment and the workers alive for it right now, as NVCF reports it:
 * `DEPLOYING` while no instance is up (NVCF: "the function's status transitions to 'DEPLOYING'" on deploy),
 * `ACTIVE` once at least one instance serves it, below `minInstances` too: the document has no state between
 * the two (its DEGRADING/DEGRADED are not among the values it lists).
 */
export function functionStatus(deployment: DeploymentLimits | null, liveWorkers: number): FunctionStatus {
  if (!deployment) return 'INACTIVE';
  return liveWorkers === 0 ? 'DEPLOYING' : 'ACTIVE';
}

/**
 * Whether a version takes invocations: ACTIVE ones, and DEPLOYING ones with `minInstances: 0`, whose requests wait
 * in the queue until a worker comes (scale from zero). A DEPLOYING version that asked for instances is refused.
 */
export function isInvocable(deployment: DeploymentLimits | null, status: FunctionStatus): boolean {
  if (!deployment) return false;
  if (status === 'ACTIVE') return true;
  return status === 'DEPLOYING' && deployment.minInstances === 0;
}
