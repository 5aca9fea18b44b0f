import { basename, resolve } from 'node:path';
import {
  createSystemSharedMemory,
  createTritonMetrics,
  type InferenceCore,
  startKserveGrpcServer,
  startKserveHttpServer,
  startMetricsServer,
} from '@nvcf/inference-server';
import type { Logger } from '@nvcf/service-kit';
import { Registry } from 'prom-client';
import { createPublicCore } from './access/public-core.ts';
import type { WorkerConfig } from './config.ts';

/** What the inference server's own surfaces take from the worker's configuration. */
export type SurfaceConfig = Pick<
  WorkerConfig,
  | 'host'
  | 'httpPort'
  | 'grpcPort'
  | 'metricsPort'
  | 'modelRepository'
  | 'maxHttpBodyBytes'
  | 'maxTensorElements'
  | 'grpcMaxReceiveBytes'
  | 'v1StrictReadiness'
  | 'v1ServerId'
  | 'modelControl'
  | 'exposeFunctionModels'
  | 'restrictedApis'
  | 'allowClientShm'
>;

export interface InferenceSurfaces {
  /** Bound ports; 0 for a surface the configuration disables. */
  ports: { http: number; grpc: number; metrics: number };
  /** Closes every surface; the core stays open. */
  close(): Promise<void>;
}

/**
 * Serves the core on the inference server's own ports: KServe V2 HTTP and gRPC (each with Triton v1 beside
 * it) and Triton's metrics (with `opts.metrics`, the worker's own, on the same port). HTTP and gRPC see the core through createPublicCore, so they refuse load/unload
 * and hide function models unless the configuration says otherwise; the queue processor is handed the core
 * itself, and the metrics count every model.
 *
 * @example
 * const surfaces = await startInferenceSurfaces(core, config, log);
 * log.info({ httpPort: surfaces.ports.http }, 'serving');
 */
export async function startInferenceSurfaces(
  core: InferenceCore,
  config: SurfaceConfig,
  log: Logger,
  opts: { metrics?: Registry[] } = {},
): Promise<InferenceSurfaces> {
  const visible = createPublicCore(core, {
    modelControl: config.modelControl,
    exposeFunctionModels: config.exposeFunctionModels,
  });
  // One set of regions for both ports: a client may register over HTTP and infer over gRPC.
  const sharedMemory = createSystemSharedMemory({
    allowClientShm: config.allowClientShm,
    enableHint: 'Start the worker with WORKER_ALLOW_CLIENT_SHM=true to enable.',
  });
  const started: { close(): Promise<void> }[] = [{ close: async () => sharedMemory.close() }];
  const track = async <T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> => {
    const s = await server;
    started.push(s);
    return s;
  };
  const closeAll = async () => {
    await Promise.all(started.map((s) => s.close()));
  };
  try {
    const http =
      config.httpPort >= 0
        ? await track(
            startKserveHttpServer(visible, {
              host: config.host,
              port: config.httpPort,
              logger: log,
              maxBodyBytes: config.maxHttpBodyBytes,
              maxElements: config.maxTensorElements,
              repositoryName: basename(resolve(config.modelRepository)),
              strictReadiness: config.v1StrictReadiness,
              serverId: config.v1ServerId,
              restrictedApis: config.restrictedApis,
              sharedMemory,
            }),
          )
        : undefined;
    const grpc =
      config.grpcPort >= 0
        ? await track(
            startKserveGrpcServer(visible, {
              host: config.host,
              port: config.grpcPort,
              logger: log,
              maxElements: config.maxTensorElements,
              strictReadiness: config.v1StrictReadiness,
              serverId: config.v1ServerId,
              maxReceiveBytes: config.grpcMaxReceiveBytes,
              restrictedApis: config.restrictedApis,
              sharedMemory,
            }),
          )
        : undefined;
    const metrics =
      config.metricsPort >= 0
        ? await track(
            startMetricsServer(Registry.merge([createTritonMetrics(core), ...(opts.metrics ?? [])]), {
              host: config.host,
              port: config.metricsPort,
            }),
          )
        : undefined;
    return {
      ports: { http: http?.port ?? 0, grpc: grpc?.port ?? 0, metrics: metrics?.port ?? 0 },
      close: closeAll,
    };
  } catch (err) {
    // A port already taken must not leave the surfaces started before it listening.
    await closeAll().catch(() => {});
    throw err;
  }
}
