import type { Keys, RedisClient } from '@nvcf/queue';

export interface RateLimiter {
  /** Counts one request for `subject`; `ok: false` with the seconds until its window resets when over. */
  take(subject: string): Promise<{ ok: boolean; retryAfterSeconds: number }>;
}

/**
 * A fixed-window limit per subject shared by every gateway (the counter lives in Redis): at most `limit`
 * requests per `windowSeconds`. One round trip per request; a disabled limiter (limit 0) costs none.
 */
export function createRateLimiter(
  redis: RedisClient,
  keys: Keys,
  opts: { limit: number; windowSeconds: number },
): RateLimiter {
  if (opts.limit <= 0) return { take: async () => ({ ok: true, retryAfterSeconds: 0 }) };
  return {
    async take(subject) {
      const now = Date.now();
      const window = Math.floor(now / 1000 / opts.windowSeconds);
      const key = keys.rateWindow(subject, window);
      // The window's first request creates the counter with its expiry; every request then counts. Sent in one
      // tick on one connection, both leave in one write and run in order: 2 commands, no MULTI/EXEC around them.
      const [, count] = await Promise.all([redis.set(key, 0, 'EX', opts.windowSeconds + 1, 'NX'), redis.incr(key)]);
      if (count <= opts.limit) return { ok: true, retryAfterSeconds: 0 };
      const resetsAt = (window + 1) * opts.windowSeconds * 1000;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((resetsAt - now) / 1000)) };
    },
  };
}
