import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

/** The object-store key of a request's large result (a zip holding `<requestId>.response`, as NVCF's). */
export const resultObjectKey = (requestId: string) => `results/${requestId}.zip`;

export interface ResultObjectIndex {
  /** Remembers that `key` may be deleted after `ttlSeconds`. */
  track(key: string, ttlSeconds: number): Promise<void>;
  /** Keys whose time is up (at most `limit`), removed from the index: the caller deletes the objects. */
  takeExpired(limit: number): Promise<string[]>;
}

/** Which stored results are due for deletion, shared by every gateway (any of them may sweep). */
export function createResultObjectIndex(redis: RedisClient, keys: Keys): ResultObjectIndex {
  return {
    async track(key, ttlSeconds) {
      await redis.zadd(keys.resultObjectExpiries, Date.now() + ttlSeconds * 1000, key);
    },
    async takeExpired(limit) {
      const due = await redis.zrangebyscore(keys.resultObjectExpiries, '-inf', Date.now(), 'LIMIT', 0, limit);
      if (due.length > 0) await redis.zrem(keys.resultObjectExpiries, ...due);
      return due;
    },
  };
}
