import type { MiddlewareHandler } from 'hono';
import type { AuthEnv } from '../auth/auth-middleware.ts';
import type { CallerLimiter } from '../auth/caller-limiter.ts';

/** 429 with `Retry-After` once the caller's credential or account passed its per-window request budget. */
export function rateLimit(limiter: CallerLimiter): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    await limiter.take(c.get('principal'));
    await next();
  };
}
