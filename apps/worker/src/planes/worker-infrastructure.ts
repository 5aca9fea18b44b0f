import { createFunctionRegistry, type FunctionRegistry } from '@nvcf/control-store';
import { createKeys, createRedis, type Keys, type RedisClient } from '@nvcf/queue';
import { type Logger, startTracing, type Tracing } from '@nvcf/service-kit';
import { type ObjectStore, openObjectStore } from '@nvcf/storage';
import type { WorkerConfig } from '../config.ts';

/** What every plane of the worker shares: connections, the function registry, storage and tracing. */
export interface WorkerInfrastructure {
  keys: Keys;
  /** Commands (registry, stores, heartbeat). */
  redis: RedisClient;
  /** The queue consumers' connection: its commands must never time out (blocking reads use duplicates of it). */
  queueConnection: RedisClient;
  /** The control plane's functions, as this worker reads and announces them. */
  registry: FunctionRegistry;
  tracing: Tracing;
  objects: ObjectStore;
  /** Flushes the last spans, then drops the Redis connections: the last step of a shutdown. */
  close(): Promise<void>;
}

export async function startWorkerInfrastructure(config: WorkerConfig, log: Logger): Promise<WorkerInfrastructure> {
  const keys = createKeys(config.keyPrefix);
  const redis = createRedis(config.redisUrl, {
    name: 'worker',
    commandTimeoutMs: config.redisCommandTimeoutMs,
    onError: (err) => log.warn({ err: err.message }, 'Redis connection error'),
  });
  const queueConnection = createRedis(config.redisUrl, { blocking: true, name: 'worker-queue' });
  const tracing = startTracing(config.tracing);
  return {
    keys,
    redis,
    queueConnection,
    registry: createFunctionRegistry(redis, keys),
    tracing,
    objects: await openObjectStore(config.objectStore),
    async close() {
      // The spans of the last jobs go out before the process ends.
      await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'flushing traces failed'));
      redis.disconnect();
      queueConnection.disconnect();
    },
  };
}
