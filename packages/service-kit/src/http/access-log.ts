import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../logger.ts';

/**
 * One line per request: method, path, status, duration, and the NVCF request id when the response has
 * one. Never bodies, tensors or credentials. The gateway logs at info; the worker's inference ports,
 * whose every call is already counted in the statistics, at debug.
 */
export function accessLog(logger: Logger, level: 'info' | 'debug' = 'info'): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    logger[level](
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
