import { AppError } from '@nvcf/protocol';
import type { RateLimiter } from '@nvcf/queue';
import type { MiddlewareHandler } from 'hono';
import type { AuthEnv } from '../auth/auth-middleware.ts';
import { principalKey } from '../auth/principal.ts';

/** 429 with `Retry-After` once the caller (`principalKey`) passed its per-window request budget. */
export function rateLimit(limiter: RateLimiter): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const { ok, retryAfterSeconds } = await limiter.take(principalKey(c.get('principal')));
    if (!ok) throw new AppError('RESOURCE_EXHAUSTED', 'rate limit exceeded for this credential', { retryAfterSeconds });
    await next();
  };
}
