import { type Context, context, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export interface TracingOptions {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; empty turns tracing off. */
  endpoint: string;
  /** `OTEL_SERVICE_NAME`: the `service.name` every span of this process carries. */
  serviceName: string;
  /** `OTEL_BSP_SCHEDULE_DELAY`: how long finished spans wait before they are sent (ms). */
  scheduleDelayMs: number;
}

/** W3C Trace Context fields (https://www.w3.org/TR/trace-context/), as they travel in headers or in a job. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export interface Tracing {
  /** False when no endpoint is set: the tracer is the API's no-op one and nothing is injected anywhere. */
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** The context a carrier (request headers, a job's `trace`) names, as the parent of what follows. */
  extract(carrier: Record<string, string | undefined>, parent?: Context): Context;
  /** The active span's context as W3C fields; undefined when tracing is off or no span is recording. */
  inject(ctx?: Context): TraceCarrier | undefined;
  /** Sends the spans still buffered, then stops (graceful shutdown). */
  shutdown(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();
const TRACER_NAME = 'nvcf';

/** Tracing that is off: the no-op tracer of `@opentelemetry/api`, so instrumented code costs next to nothing. */
export const tracingOff: Tracing = {
  enabled: false,
  tracer: trace.getTracer(TRACER_NAME),
  extract: (_carrier, parent) => parent ?? context.active(),
  inject: () => undefined,
  shutdown: async () => {},
};

/**
 * Starts this service's tracing: spans go to `<endpoint>/v1/traces` as OTLP/HTTP JSON
 * (https://opentelemetry.io/docs/specs/otel/protocol/exporter/), batched. The provider is not registered
 * globally: the gateway and the worker may share a process (tests, a single-node run) and each keeps its own
 * `service.name`; the tracer is handed to the code that makes spans instead. The async-local context manager is
 * global (one per process), so spans started inside a request's async work find its span as their parent.
 */
export function startTracing(opts: TracingOptions): Tracing {
  if (opts.endpoint === '') return tracingOff;
  // False when one is set already (a second service in this process): that one serves both.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: opts.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: opts.scheduleDelayMs })],
  });
  const getter = {
    keys: (c: Record<string, string | undefined>) => Object.keys(c),
    get: (c: Record<string, string | undefined>, key: string) => c[key],
  };
  return {
    enabled: true,
    tracer: provider.getTracer(TRACER_NAME),
    extract: (carrier, parent) => propagator.extract(parent ?? context.active(), carrier, getter),
    inject(ctx = context.active()) {
      const fields: Record<string, string> = {};
      propagator.inject(ctx, fields, {
        set(c, k, v) {
          c[k] = v;
        },
      });
      const { traceparent, tracestate } = fields;
      if (traceparent === undefined) return undefined;
      return tracestate ? { traceparent, tracestate } : { traceparent };
    },
    shutdown: () => provider.shutdown(),
  };
}
