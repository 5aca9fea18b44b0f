import type { Logger } from '@nvcf/service-kit';
import type { MiddlewareHandler } from 'hono';

/** One line per request: method, path, status, duration and the NVCF request id. Never bodies. */
export function accessLog(logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    logger.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
        requestId: c.res.headers.get('nvcf-reqid') ?? undefined,
      },
      'request',
    );
  };
}
