import { AppError } from '@nvcf/protocol';
import type { RateLimiter } from '@nvcf/queue';
import type { MiddlewareHandler } from 'hono';
import type { AuthEnv } from '../auth/auth-middleware.ts';

/** 429 with `Retry-After` once the caller's credential passed its per-window request budget. */
export function rateLimit(limiter: RateLimiter): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const { ok, retryAfterSeconds } = await limiter.take(c.get('principal').subject);
    if (!ok) throw new AppError('RESOURCE_EXHAUSTED', 'rate limit exceeded for this credential', { retryAfterSeconds });
    await next();
  };
}
