import { errorCodeInfo } from '@nvcf/protocol';
import type { InvocationProcessor } from '@nvcf/queue';
import { recordSpanFailure, type Tracing } from '@nvcf/service-kit';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';

/**
 * A job's spans, in the trace its gateway started (the job's `trace`, W3C Trace Context): `queue.wait` from the
 * moment the job's entry joined the stream to its delivery here, then `job.process` around the processor, active
 * while it runs so the model run's `session.run` is its child. Both are children of the gateway's span, as a
 * consumer's spans are of the message's producer (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/).
 * Tracing off: the processor as it is.
 */
export function tracedProcessor(processor: InvocationProcessor, tracing: Tracing): InvocationProcessor {
  if (!tracing.enabled) return processor;
  const { tracer } = tracing;
  return (job, ctx) => {
    const parent = job.trace ? tracing.extract({ ...job.trace }, ROOT_CONTEXT) : ROOT_CONTEXT;
    const attributes = {
      'messaging.system': 'redis',
      'messaging.operation.type': 'process',
      'nvcf.request_id': job.requestId,
      'nvcf.function_id': job.functionId,
      'nvcf.function_version_id': job.versionId,
      'nvcf.attempt': ctx.attempt,
    };
    const delivered = Date.now();
    // The entry id's time is Redis's clock: a worker whose clock runs behind must not start the wait after its end.
    const waitStart = Math.min(ctx.queuedAt, delivered);
    tracer
      .startSpan('queue.wait', { kind: SpanKind.CONSUMER, startTime: waitStart, attributes }, parent)
      .end(delivered);
    // The processing starts where the wait ends, to the same clock reading.
    const options = { kind: SpanKind.CONSUMER, startTime: delivered, attributes };
    return tracer.startActiveSpan('job.process', options, parent, async (span) => {
      try {
        const result = await processor(job, ctx);
        if (result) {
          span.setAttribute('nvcf.result.status', result.status);
          // The platform's or the function's fault (a 5xx code), not the caller's.
          if (!result.ok && errorCodeInfo[result.code].http >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return result;
      } catch (err) {
        // Thrown: the consumer retries the job (or answers it failed on its last attempt).
        recordSpanFailure(span, err);
        throw err;
      } finally {
        span.end();
      }
    });
  };
}
