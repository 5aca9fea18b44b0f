import type { Logger } from '@nvcf/service-kit';
import type { MiddlewareHandler } from 'hono';

/** One debug line per request: method, path, status, duration. Never bodies or tensors. */
export function accessLog(logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    logger.debug(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
      },
      'request',
    );
  };
}
