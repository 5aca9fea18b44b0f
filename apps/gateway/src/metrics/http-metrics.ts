import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { nodeResponse } from '../http/after-response.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/**
 * Counts every response by method, matched route pattern and status (errors included: they are answered by
 * `onError` before this sees the response). The route is the pattern (`/v2/nvcf/pexec/status/:requestId`),
 * never the path, so ids do not multiply the series; a path no route matched counts as `unmatched`.
 */
export function httpMetrics(metrics: GatewayMetrics): MiddlewareHandler {
  return async (c, next) => {
    await next();
    // The route index is left at the last handler that ran: the route that answered (or refused) the call.
    const route = routePath(c);
    metrics.httpResponses.inc({
      method: c.req.method,
      route: route && route !== '/*' && route !== '*' ? route : 'unmatched',
      code: String(c.res.status),
    });
  };
}

/**
 * Counts an invocation call (pexec, status poll, exec status) as open from when it passed its checks until
 * its response is closed: a long-poll while it waits, an event stream (`Accept: text/event-stream`) while it
 * streams. Placed after authentication and the rate limit, so refused calls never count.
 */
export function openRequestsGauge(metrics: GatewayMetrics): MiddlewareHandler {
  return async (c, next) => {
    const kind = /\btext\/event-stream\b/i.test(c.req.header('accept') ?? '') ? 'stream' : 'long_poll';
    metrics.openRequests.inc({ kind });
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      metrics.openRequests.dec({ kind });
    };
    const outgoing = nodeResponse(c);
    try {
      await next();
    } finally {
      // A streamed body outlives the handler: it stays open until the response is closed.
      if (outgoing && !outgoing.closed) outgoing.once('close', close);
      else close();
    }
  };
}
