import { basename, resolve } from 'node:path';
import {
  createFunctionRegistry,
  createInvocationConsumer,
  createKeys,
  createRedis,
  createRequestStore,
} from '@nvcf/queue';
import { createLogger, type Logger } from '@nvcf/service-kit';
import type { Worker } from 'bullmq';
import type { WorkerConfig } from './config.ts';
import { modelFunctionVersion } from './functions/model-functions.ts';
import { startKserveGrpcServer } from './grpc/index.ts';
import { startHeartbeat } from './heartbeat.ts';
import { startKserveHttpServer } from './http/kserve-server.ts';
import { startInferenceCore } from './inference-server/create-core.ts';
import { createInvocationProcessor } from './invocation-processor.ts';
import { startMetricsServer } from './metrics/metrics-server.ts';
import { createTritonMetrics } from './metrics/triton-metrics.ts';

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
 * (repository API) starts or stops the matching consumer.
 */
export async function startWorker(config: WorkerConfig, logger?: Logger): Promise<RunningWorker> {
  const log = (logger ?? createLogger({ name: 'worker', level: config.logLevel })).child({ workerId: config.workerId });
  const keys = createKeys(config.keyPrefix);
  const redis = createRedis(config.redisUrl, { name: 'worker' });
  const bullConnection = createRedis(config.redisUrl, { blocking: true, name: 'worker-bull' });
  const registry = createFunctionRegistry(redis, keys);
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const core = await startInferenceCore(config, log);

  const consumers = new Map<string, Worker>();
  const heartbeat = startHeartbeat(
    registry,
    config.workerId,
    () => [...consumers.keys()],
    config.heartbeatIntervalMs,
    log,
  );

  /** Makes the consumers match the loaded model versions. */
  const sync = async () => {
    const loaded = (await core.repositoryIndex({ readyOnly: true })).filter((e) => e.version !== undefined);
    const wanted = new Set<string>();
    for (const entry of loaded) {
      const version = entry.version as string;
      const fv = modelFunctionVersion(core.modelMetadata(entry.name, version), version, config.ncaId);
      wanted.add(fv.versionId);
      if (consumers.has(fv.versionId)) continue;
      await registry.upsert(fv);
      const processor = createInvocationProcessor({
        store,
        core,
        model: { name: entry.name, version },
        logger: log,
        maxTensorElements: config.maxTensorElements,
      });
      const consumer = createInvocationConsumer(bullConnection, keys, fv.versionId, processor, {
        concurrency: config.concurrency,
        lockDurationMs: config.lockDurationMs,
        stalledIntervalMs: config.stalledIntervalMs,
        maxStalledCount: config.maxStalledCount,
      });
      consumer.on('error', (err) => log.error({ err, versionId: fv.versionId }, 'consumer error'));
      consumers.set(fv.versionId, consumer);
      log.info({ model: entry.name, version, functionId: fv.id, versionId: fv.versionId }, 'serving');
    }
    for (const [versionId, consumer] of consumers) {
      if (wanted.has(versionId)) continue;
      consumers.delete(versionId);
      await registry.removeWorker(config.workerId, [versionId]);
      await consumer.close(); // graceful: the version's in-flight jobs finish
    }
    await Promise.all([...consumers.values()].map((c) => c.waitUntilReady()));
  };
  let syncing = Promise.resolve();
  const resync = () => {
    syncing = syncing.then(sync).catch((err: unknown) => log.error({ err }, 'consumer sync failed'));
    return syncing;
  };
  core.onChange(() => void resync());
  await resync();
  await heartbeat.beat();

  // The inference server's own surfaces over the same core: KServe V2 HTTP and gRPC, Triton metrics.
  const http =
    config.httpPort >= 0
      ? await startKserveHttpServer(core, {
          host: config.host,
          port: config.httpPort,
          logger: log,
          maxBodyBytes: config.maxHttpBodyBytes,
          maxElements: config.maxTensorElements,
          repositoryName: basename(resolve(config.modelRepository)),
        })
      : undefined;
  const grpc =
    config.grpcPort >= 0
      ? await startKserveGrpcServer(core, {
          host: config.host,
          port: config.grpcPort,
          logger: log,
          maxElements: config.maxTensorElements,
        })
      : undefined;
  const metrics =
    config.metricsPort >= 0
      ? await startMetricsServer(createTritonMetrics(core), { host: config.host, port: config.metricsPort })
      : undefined;
  log.info(
    { functions: consumers.size, httpPort: http?.port, grpcPort: grpc?.port, metricsPort: metrics?.port },
    'worker ready',
  );

  let closing: Promise<void> | undefined;
  return {
    workerId: config.workerId,
    get versionIds() {
      return [...consumers.keys()];
    },
    ports: { http: http?.port ?? 0, grpc: grpc?.port ?? 0, metrics: metrics?.port ?? 0 },
    close() {
      closing ??= (async () => {
        await heartbeat.stop().catch(() => {});
        const all = [...consumers.values()];
        const drained = Promise.all(all.map((c) => c.close()));
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((r) => setTimeout(() => r(true), config.shutdownTimeoutMs).unref()),
        ]);
        // Jobs still running past the timeout are abandoned; another worker recovers them as stalled.
        if (timedOut) {
          log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out; forcing close');
          await Promise.all(all.map((c) => c.close(true)));
        }
        await Promise.all([http?.close(), grpc?.close(), metrics?.close()]);
        await core.close();
        redis.disconnect();
        bullConnection.disconnect();
        log.info('worker stopped');
      })();
      return closing;
    },
  };
}
