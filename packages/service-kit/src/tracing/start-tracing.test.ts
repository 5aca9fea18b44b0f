import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startTracing, tracingOff } from './start-tracing.ts';

const TRACEPARENT = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;

describe('startTracing', () => {
  it('is off without an endpoint: no provider, nothing to inject', async () => {
    const tracing = startTracing({ endpoint: '', serviceName: 'x', scheduleDelayMs: 10 });
    expect(tracing).toBe(tracingOff);
    expect(tracing.inject(tracing.extract({ traceparent: TRACEPARENT }, ROOT_CONTEXT))).toBeUndefined();
    await tracing.shutdown();
  });

  it('reads and writes W3C Trace Context, and records spans under the extracted parent', async () => {
    // Nothing is exported: the span is left unended (it holds no resource; only an ended span is queued for export),
    // so the shutdown has nothing to send to the endpoint, where nothing listens.
    const tracing = startTracing({ endpoint: 'http://127.0.0.1:9', serviceName: 'x', scheduleDelayMs: 60_000 });
    try {
      const parent = tracing.extract({ traceparent: TRACEPARENT, tracestate: 'k=v' }, ROOT_CONTEXT);
      expect(tracing.inject(parent)).toEqual({ traceparent: TRACEPARENT, tracestate: 'k=v' });
      const span = tracing.tracer.startSpan('child', {}, parent);
      const carried = tracing.inject(trace.setSpan(parent, span));
      expect(carried?.traceparent).toMatch(new RegExp(`^00-${'1'.repeat(32)}-(?!${'2'.repeat(16)})[0-9a-f]{16}-01$`));
      expect(span.isRecording()).toBe(true);
      // A malformed traceparent names no parent: nothing to carry.
      expect(tracing.inject(tracing.extract({ traceparent: 'garbage' }, ROOT_CONTEXT))).toBeUndefined();
    } finally {
      await tracing.shutdown();
    }
  });
});
