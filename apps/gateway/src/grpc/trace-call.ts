import type { UnaryImpl } from '@nvcf/kserve-grpc';
import type { Tracing } from '@nvcf/service-kit';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * A server span around a unary RPC (https://opentelemetry.io/docs/specs/semconv/rpc/grpc/), named
 * `inference.GRPCInferenceService/<method>`, child of the caller's W3C `traceparent` metadata when sent; active
 * while the call runs, so the job it queues carries it (as the HTTP routes' span, http/trace-span.ts). Tracing off:
 * the handler as it is.
 */
export function traceUnary<Req, Res>(tracing: Tracing, method: string, impl: UnaryImpl<Req, Res>): UnaryImpl<Req, Res> {
  if (!tracing.enabled) return impl;
  const service = 'inference.GRPCInferenceService';
  return async (request, call) => {
    const first = (key: string) => {
      const value = call.metadata.get(key)[0];
      return typeof value === 'string' ? value : undefined;
    };
    const parent = tracing.extract(
      { traceparent: first('traceparent'), tracestate: first('tracestate') },
      ROOT_CONTEXT,
    );
    const span = tracing.tracer.startSpan(
      `${service}/${method}`,
      { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } },
      parent,
    );
    try {
      return await context.with(trace.setSpan(parent, span), () => impl(request, call));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  };
}
