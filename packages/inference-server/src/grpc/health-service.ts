import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { type HealthCheckRequestMsg, unary } from '@nvcf/kserve-grpc';
import { AppError } from '@nvcf/protocol';
import type { InferenceCore } from '../core/core-types.ts';

/** The service names this server answers health checks for: the server as a whole. */
const SERVED = new Set(['', 'inference.GRPCInferenceService']);

/**
 * `grpc.health.v1.Health/Check`: SERVING while the core is ready (every model loaded), NOT_SERVING
 * otherwise; an unknown service name is NOT_FOUND, as the standard health service answers.
 */
export function createHealthService(core: InferenceCore): UntypedServiceImplementation {
  return {
    Check: unary('Check', (req: HealthCheckRequestMsg) => {
      if (!SERVED.has(req.service)) throw new AppError('NOT_FOUND', `unknown service '${req.service}'`);
      return { status: core.isReady() ? 'SERVING' : 'NOT_SERVING' };
    }),
  };
}
