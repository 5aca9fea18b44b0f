import { createKeys, createRedis, type Keys, type RedisClient } from '@nvcf/queue';
import { type Logger, startTracing, type Tracing } from '@nvcf/service-kit';
import { type ObjectStore, openObjectStore } from '@nvcf/storage';
import { urlSigningSecret } from '../assets/index.ts';
import type { GatewayConfig } from '../config.ts';
import { createGatewayMetrics, type GatewayMetrics } from '../metrics/gateway-metrics.ts';

/** What every plane of the gateway shares: connections, storage, secrets and observability. */
export interface GatewayInfrastructure {
  log: Logger;
  tracing: Tracing;
  keys: Keys;
  /** Commands (every store and the producer). */
  redis: RedisClient;
  /** The one pub/sub connection of this process: the completion waiter's. */
  subscriber: RedisClient;
  objects: ObjectStore;
  /** Signs both upload URLs (assets) and result URLs: one secret for both. */
  signingSecret: string;
  metrics: GatewayMetrics;
  /** Flushes the last spans, then drops both Redis connections: the last step of a shutdown. */
  close(): Promise<void>;
}

export async function startGatewayInfrastructure(config: GatewayConfig, log: Logger): Promise<GatewayInfrastructure> {
  const tracing = startTracing(config.tracing);
  const redis = createRedis(config.redisUrl, {
    name: 'gateway',
    commandTimeoutMs: config.redisCommandTimeoutMs,
    onError: (err) => log.warn({ err: err.message }, 'Redis connection error'),
  });
  const subscriber = createRedis(config.redisUrl, { blocking: true, name: 'gateway-sub' });
  return {
    log,
    tracing,
    keys: createKeys(config.keyPrefix),
    redis,
    subscriber,
    objects: await openObjectStore(config.objectStore),
    signingSecret: urlSigningSecret(config.urlSigningSecret, (msg) => log.warn(msg)),
    metrics: createGatewayMetrics(),
    async close() {
      // The spans of the last calls go out before the process ends.
      await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'flushing traces failed'));
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}
