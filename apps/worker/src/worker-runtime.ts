import {
  createFunctionAuthorizationStore,
  createFunctionRegistry,
  createFunctionSecretStore,
  createSecretCipher,
} from '@nvcf/control-store';
import { startInferenceCore } from '@nvcf/inference-server';
import { createEventStream, createKeys, createRedis, createRequestStore, createResultObjectIndex } from '@nvcf/queue';
import { createLogger, type Logger, startTracing } from '@nvcf/service-kit';
import { openObjectStore } from '@nvcf/storage';
import type { WorkerConfig } from './config.ts';
import { createConsumerSync } from './consumer-sync.ts';
import { createContainerServers } from './container/container-servers.ts';
import { openProcessMode } from './container/process-mode.ts';
import { createFunctionModelLoader, ownedFunctionModels, removeUnreferencedFunctionModels } from './function-models.ts';
import { startHeartbeat } from './heartbeat.ts';
import { startInferenceSurfaces } from './inference-surfaces.ts';
import { createJobMetrics } from './job-metrics.ts';
import { createLargeResultStore } from './large-results.ts';

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
  const redis = createRedis(config.redisUrl, {
    name: 'worker',
    commandTimeoutMs: config.redisCommandTimeoutMs,
    onError: (err) => log.warn({ err: err.message }, 'Redis connection error'),
  });
  const queueConnection = createRedis(config.redisUrl, { blocking: true, name: 'worker-queue' });
  const registry = createFunctionRegistry(redis, keys);
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  // A function version deleted while this worker was down must not be loaded again (the first sync would
  // unload it, but it would be served until then). Without Redis yet, that first sync does it.
  await registry
    .list()
    .then((fvs) => removeUnreferencedFunctionModels(config.modelRepository, ownedFunctionModels(fvs), log))
    .catch((err: unknown) => log.warn({ err }, 'could not look for deleted function models before loading'));
  const tracing = startTracing(config.tracing);
  const core = await startInferenceCore(config, log, tracing.enabled ? { tracer: tracing.tracer } : {});

  const objects = await openObjectStore(config.objectStore);
  const functionModels = createFunctionModelLoader({
    core,
    objects,
    repository: config.modelRepository,
    log,
    archiveLimits: { maxBytes: config.modelArchiveMaxBytes, maxRatio: config.modelArchiveMaxRatio },
  });
  const jobMetrics = createJobMetrics();
  const processMode = await openProcessMode(config, log);
  const { key: secretsKey, previousKey } = config.secrets;
  const secrets = createFunctionSecretStore(
    redis,
    keys,
    secretsKey ? createSecretCipher({ key: secretsKey, ...(previousKey ? { previousKey } : {}) }) : undefined,
  );
  const consumers = createConsumerSync({
    jobMetrics,
    core,
    secrets,
    authorizations: createFunctionAuthorizationStore(redis, keys),
    registry,
    store,
    keys,
    connection: queueConnection,
    config,
    log,
    tracing,
    functionModels,
    events: createEventStream(redis, keys, { ttlSeconds: config.requestTtlSeconds }),
    objects,
    containers: createContainerServers({
      url: config.container.url,
      processes: config.container.processes,
      ...processMode,
      workDir: config.container.workDir,
      intervalMs: config.heartbeatIntervalMs,
      secretsDir: config.container.secretsDir,
      log,
      // A server's health decides whether its version is consumed (and heartbeated): re-sync at once.
      onChange: () => void resync(),
    }),
    largeResults: createLargeResultStore({
      objects,
      index: createResultObjectIndex(redis, keys),
      maxDirectBytes: config.maxDirectResultBytes,
      ttlSeconds: config.resultObjectTtlSeconds,
    }),
  });
  const heartbeat = startHeartbeat(registry, config.workerId, consumers.versionIds, config.heartbeatIntervalMs, log, {
    ...config.machine,
    startedAt: Date.now(),
  });

  // Re-sync serially on every trigger: a model loaded or unloaded here, a deployment changed anywhere
  // (pub/sub), and a periodic pass in case a notification was missed.
  let syncing = Promise.resolve();
  const resync = () => {
    syncing = syncing.then(consumers.sync).catch((err: unknown) => log.error({ err }, 'consumer sync failed'));
    return syncing;
  };
  core.onChange(() => void resync());
  const subscriber = createRedis(config.redisUrl, { blocking: true, name: 'worker-sub' });
  subscriber.on('message', () => void resync());
  await subscriber.subscribe(keys.deploymentsChanged);
  const periodic = setInterval(() => void resync(), config.deploymentSyncMs);
  periodic.unref();
  await resync();
  await heartbeat.beat();

  // The inference server's own surfaces over the same core: KServe V2 HTTP and gRPC, Triton metrics. They
  // refuse load/unload and hide function models unless configured otherwise; the queue above is unaffected.
  const surfaces = await startInferenceSurfaces(core, config, log, { metrics: [jobMetrics.registry] });
  log.info(
    {
      functions: consumers.versionIds().length,
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
      return consumers.versionIds();
    },
    ports: surfaces.ports,
    close() {
      closing ??= (async () => {
        clearInterval(periodic);
        subscriber.disconnect();
        await heartbeat.stop().catch(() => {});
        const drained = consumers.close();
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((r) => setTimeout(() => r(true), config.shutdownTimeoutMs).unref()),
        ]);
        // Jobs still running past the timeout are abandoned; another worker recovers them as stalled.
        if (timedOut) {
          log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out; forcing close');
          await consumers.close(true);
        }
        await surfaces.close();
        await core.close();
        // The spans of the last jobs go out before the process ends.
        await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'flushing traces failed'));
        redis.disconnect();
        queueConnection.disconnect();
        log.info('worker stopped');
      })();
      return closing;
    },
  };
}
