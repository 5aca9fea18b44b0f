import { recordSpanFailure } from '@nvcf/service-kit';
import type { Attributes, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { BatchedAnswer } from './dynamic-batcher.ts';

export interface RunSpanFacts {
  model: string;
  version: string;
  /** The request's own rows (its batch dimension). */
  rows: number;
  /** Whether a dynamic batcher may merge it with other requests. */
  batched: boolean;
}

/**
 * A `session.run` span around one request's model run, on this (the main) thread: the ONNX Runtime call itself
 * happens on an instance's worker thread, where no tracer lives (or, for a run measured tiny, inline on this
 * thread: runtime/inline-runs.ts). With a dynamic batcher the span covers the
 * request's wait in the batcher and the execution it joined; its batch membership is recorded as attributes
 * (the execution's rows beside the request's own) and as links to the spans of the requests it ran with, as
 * OpenTelemetry relates work that merges requests
 * (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/#batching). Without a tracer (tracing
 * off) the run goes ahead untouched.
 */
export function traceRun(
  tracer: Tracer | undefined,
  facts: RunSpanFacts,
  run: (span?: SpanContext) => Promise<BatchedAnswer>,
): Promise<BatchedAnswer> {
  if (!tracer) return run();
  const attributes = {
    'nvcf.model.name': facts.model,
    'nvcf.model.version': facts.version,
    'nvcf.request.rows': facts.rows,
    'nvcf.batch.dynamic': facts.batched,
  };
  return spanAround(tracer, attributes, async (span) => {
    const ran = await run(span.spanContext());
    if (ran.peers) span.addLinks(ran.peers.map((context) => ({ context })));
    span.setAttributes({
      'nvcf.batch.size': ran.batchSize,
      // More rows than its own: the batcher merged this request with others into one execution.
      'nvcf.batch.merged': ran.batchSize > facts.rows,
      'nvcf.batch.queue_ms': ran.queueNs / 1e6,
      'nvcf.compute.infer_ms': ran.computeInferNs / 1e6,
    });
    return ran;
  });
}

/**
 * The `session.run` span of a decoupled model's run (one request, any number of responses): `respond` counts
 * what the run answers (`nvcf.responses`). Without a tracer, the run as it is.
 */
export function traceDecoupledRun(
  tracer: Tracer | undefined,
  facts: Pick<RunSpanFacts, 'model' | 'version'>,
  run: (responded: () => void) => Promise<void>,
): Promise<void> {
  if (!tracer) return run(() => {});
  const attributes = {
    'nvcf.model.name': facts.model,
    'nvcf.model.version': facts.version,
    'nvcf.model.decoupled': true,
  };
  return spanAround(tracer, attributes, async (span) => {
    let responses = 0;
    try {
      await run(() => {
        responses += 1;
      });
    } finally {
      span.setAttribute('nvcf.responses', responses);
    }
  });
}

/** A `session.run` span, active while `work` runs; a failure marks it an error and goes on. */
function spanAround<T>(tracer: Tracer, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan('session.run', { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      recordSpanFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
