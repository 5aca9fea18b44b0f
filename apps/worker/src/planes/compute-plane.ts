import { createFunctionAuthorizationStore, createFunctionSecretStore, createSecretCipher } from '@nvcf/control-store';
import type { InferenceCore } from '@nvcf/inference-server';
import { createEventStream, createRedis, createRequestStore, createResultObjectIndex } from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import type { WorkerConfig } from '../config.ts';
import { type ConsumerSync, createConsumerSync } from '../consumer-sync.ts';
import { createContainerServers } from '../container/container-servers.ts';
import { openProcessMode } from '../container/process-mode.ts';
import { startHeartbeat } from '../heartbeat.ts';
import { createJobMetrics, type JobMetrics } from '../job-metrics.ts';
import { createLargeResultStore } from '../large-results.ts';
import type { InferencePlane } from './inference-plane.ts';
import type { WorkerInfrastructure } from './worker-infrastructure.ts';

/** The queues this worker consumes, kept in step with deployments and announced by heartbeat. */
export interface ComputePlane {
  /** Function version ids consumed right now. */
  versionIds(): string[];
  /** Each job's queue wait, processing time and outcome: served beside the inference server's metrics. */
  jobMetrics: JobMetrics;
  /** Stops syncing and heartbeating, then drains the consumers (forced past `shutdownTimeoutMs`). */
  close(): Promise<void>;
}

interface ComputeParts {
  infra: WorkerInfrastructure;
  inference: InferencePlane;
  config: WorkerConfig;
  log: Logger;
}

export async function startComputePlane(parts: ComputeParts): Promise<ComputePlane> {
  const { infra, config, log } = parts;
  const jobMetrics = createJobMetrics();
  // A server's health decides whether its version is consumed (and heartbeated): re-sync at once.
  const consumers = await openConsumerSync(parts, jobMetrics, () => void resync());
  const machine = { ...config.machine, startedAt: Date.now() };
  const heartbeat = startHeartbeat(
    infra.registry,
    config.workerId,
    consumers.versionIds,
    config.heartbeatIntervalMs,
    log,
    machine,
  );
  const resync = serially(consumers.sync, log);
  const triggers = await startSyncTriggers(resync, parts.inference.core, parts);
  await resync();
  await heartbeat.beat();
  return {
    versionIds: consumers.versionIds,
    jobMetrics,
    async close() {
      triggers.stop();
      await heartbeat.stop().catch(() => {});
      await drain(consumers, config.shutdownTimeoutMs, log);
    },
  };
}

async function openConsumerSync(
  { infra, inference, config, log }: ComputeParts,
  jobMetrics: JobMetrics,
  onContainersChange: () => void,
): Promise<ConsumerSync> {
  const { redis, keys, objects } = infra;
  const processMode = await openProcessMode(config, log);
  const { key: secretsKey, previousKey } = config.secrets;
  const secrets = createFunctionSecretStore(
    redis,
    keys,
    secretsKey ? createSecretCipher({ key: secretsKey, ...(previousKey ? { previousKey } : {}) }) : undefined,
  );
  return createConsumerSync({
    jobMetrics,
    core: inference.core,
    secrets,
    authorizations: createFunctionAuthorizationStore(redis, keys),
    registry: infra.registry,
    store: createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds }),
    keys,
    connection: infra.queueConnection,
    config,
    log,
    tracing: infra.tracing,
    functionModels: inference.functionModels,
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
      onChange: onContainersChange,
    }),
    largeResults: createLargeResultStore({
      objects,
      index: createResultObjectIndex(redis, keys),
      maxDirectBytes: config.maxDirectResultBytes,
      ttlSeconds: config.resultObjectTtlSeconds,
    }),
  });
}

/** Runs `sync` once per call, one after another: a trigger while a sync runs queues the next. */
function serially(sync: () => Promise<void>, log: Logger): () => Promise<void> {
  let syncing = Promise.resolve();
  return () => {
    syncing = syncing.then(sync).catch((err: unknown) => log.error({ err }, 'consumer sync failed'));
    return syncing;
  };
}

/**
 * Re-syncs on every trigger: a model loaded or unloaded here, a deployment changed anywhere (pub/sub), and a
 * periodic pass in case a notification was missed.
 */
async function startSyncTriggers(
  resync: () => Promise<void>,
  core: InferenceCore,
  { infra, config }: ComputeParts,
): Promise<{ stop(): void }> {
  core.onChange(() => void resync());
  const subscriber = createRedis(config.redisUrl, { blocking: true, name: 'worker-sub' });
  subscriber.on('message', () => void resync());
  await subscriber.subscribe(infra.keys.deploymentsChanged);
  const periodic = setInterval(() => void resync(), config.deploymentSyncMs);
  periodic.unref();
  return {
    stop() {
      clearInterval(periodic);
      subscriber.disconnect();
    },
  };
}

async function drain(consumers: ConsumerSync, timeoutMs: number, log: Logger): Promise<void> {
  const drained = consumers.close();
  const timedOut = await Promise.race([
    drained.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), timeoutMs).unref()),
  ]);
  // Jobs still running past the timeout are abandoned; another worker recovers them as stalled.
  if (timedOut) {
    log.warn({ timeoutMs }, 'drain timed out; forcing close');
    await consumers.close(true);
  }
}
