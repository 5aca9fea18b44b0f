import type { Tracing } from '@nvcf/service-kit';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';

/**
 * A server span per call (https://opentelemetry.io/docs/specs/semconv/http/http-spans/), child of the client's
 * span when the call carries a W3C `traceparent` (https://www.w3.org/TR/trace-context/). It is the active span
 * while the call is handled, so the invocation service puts it into the job it queues. Named by the route that
 * answered (its pattern, never the path, so ids stay out of span names). Nothing runs when tracing is off.
 */
export function traceSpan(tracing: Tracing): MiddlewareHandler {
  if (!tracing.enabled) return (_c, next) => next();
  return async (c, next) => {
    const parent = tracing.extract(
      { traceparent: c.req.header('traceparent'), tracestate: c.req.header('tracestate') },
      ROOT_CONTEXT,
    );
    const span = tracing.tracer.startSpan(
      c.req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      // The route index is left at the last handler that ran: the route that answered (or refused) the call.
      const route = routePath(c);
      if (route && route !== '/*' && route !== '*') {
        span.updateName(`${c.req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const requestId = c.res.headers.get('nvcf-reqid');
      if (requestId) span.setAttribute('nvcf.request_id', requestId);
      span.end();
    }
  };
}
