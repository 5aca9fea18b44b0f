import { SessionCache, scanModelRepository } from '@nvcf/models';
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
import { startHeartbeat } from './heartbeat.ts';
import { createInvocationProcessor } from './invocation-processor.ts';

export interface RunningWorker {
  workerId: string;
  /** Function version ids this worker consumes. */
  versionIds: string[];
  /** Stops taking jobs, lets in-flight ones finish (up to the shutdown timeout), releases everything. */
  close(): Promise<void>;
}

/**
 * Loads every model version of the repository, publishes each as a function version, and consumes
 * each version's queue.
 */
export async function startWorker(config: WorkerConfig, logger?: Logger): Promise<RunningWorker> {
  const log = (logger ?? createLogger({ name: 'worker', level: config.logLevel })).child({ workerId: config.workerId });
  const keys = createKeys(config.keyPrefix);
  const redis = createRedis(config.redisUrl, { name: 'worker' });
  const bullConnection = createRedis(config.redisUrl, { blocking: true, name: 'worker-bull' });
  const registry = createFunctionRegistry(redis, keys);
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const sessions = new SessionCache({
    executionProviders: config.executionProviders,
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: config.interOpThreads,
    logger: log,
  });

  const entries = await scanModelRepository(config.modelRepository);
  const models = [];
  for (const entry of entries) models.push(await sessions.load(entry));

  const consumers: Worker[] = [];
  const versionIds: string[] = [];
  for (const model of models) {
    const fv = modelFunctionVersion(model, config.ncaId);
    await registry.upsert(fv);
    versionIds.push(fv.versionId);
    const processor = createInvocationProcessor({
      store,
      model,
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
    consumers.push(consumer);
    log.info({ model: model.name, version: model.version, functionId: fv.id, versionId: fv.versionId }, 'serving');
  }
  await Promise.all(consumers.map((c) => c.waitUntilReady()));
  const heartbeat = startHeartbeat(registry, config.workerId, versionIds, config.heartbeatIntervalMs, log);
  await heartbeat.beat();
  log.info({ models: models.length }, 'worker ready');

  let closing: Promise<void> | undefined;
  return {
    workerId: config.workerId,
    versionIds,
    close() {
      closing ??= (async () => {
        await heartbeat.stop().catch(() => {});
        const drained = Promise.all(consumers.map((c) => c.close()));
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((r) => setTimeout(() => r(true), config.shutdownTimeoutMs).unref()),
        ]);
        // Jobs still running past the timeout are abandoned; another worker recovers them as stalled.
        if (timedOut) {
          log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out; forcing close');
          await Promise.all(consumers.map((c) => c.close(true)));
        }
        await sessions.close();
        redis.disconnect();
        bullConnection.disconnect();
        log.info('worker stopped');
      })();
      return closing;
    },
  };
}
