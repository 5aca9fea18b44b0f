import { createLogger, type Logger } from '@nvcf/service-kit';
import type { WorkerConfig } from './config.ts';
import { startInferenceSurfaces } from './inference-surfaces.ts';
import { startComputePlane } from './planes/compute-plane.ts';
import { startInferencePlane } from './planes/inference-plane.ts';
import { startWorkerInfrastructure } from './planes/worker-infrastructure.ts';

export interface RunningWorker {
  workerId: string;
  /** Function version ids this worker consumes right now. */
  readonly versionIds: string[];
  /** Ports of the inference server's surfaces (0 when disabled). */
  ports: { http: number; grpc: number; metrics: number };
  /** Stops taking jobs, lets in-flight ones finish (up to the shutdown timeout), releases everything. */
  close(): Promise<void>;
}

/**
 * Loads the model repository into the inference core, publishes every loaded model version as a
 * function version and consumes its queue, and serves the core's metrics. Loading or unloading a model
 * (repository API) starts or stops the matching consumer. The planes (planes/) start in the order they depend on
 * each other and close in the reverse one.
 */
export async function startWorker(config: WorkerConfig, logger?: Logger): Promise<RunningWorker> {
  const log = (logger ?? createLogger({ name: 'worker', level: config.logLevel })).child({ workerId: config.workerId });
  const infra = await startWorkerInfrastructure(config, log);
  const inference = await startInferencePlane(infra, config, log);
  const compute = await startComputePlane({ infra, inference, config, log });
  // The inference server's own surfaces over the same core: KServe V2 HTTP and gRPC, Triton metrics. They
  // refuse load/unload and hide function models unless configured otherwise; the queue above is unaffected.
  const surfaces = await startInferenceSurfaces(inference.core, config, log, {
    metrics: [compute.jobMetrics.registry],
  });
  log.info(
    {
      functions: compute.versionIds().length,
      httpPort: surfaces.ports.http || undefined,
      grpcPort: surfaces.ports.grpc || undefined,
      metricsPort: surfaces.ports.metrics || undefined,
    },
    'worker ready',
  );

  let closing: Promise<void> | undefined;
  return {
    workerId: config.workerId,
    get versionIds() {
      return compute.versionIds();
    },
    ports: surfaces.ports,
    close() {
      closing ??= (async () => {
        await compute.close();
        await surfaces.close();
        await inference.close();
        await infra.close();
        log.info('worker stopped');
      })();
      return closing;
    },
  };
}
