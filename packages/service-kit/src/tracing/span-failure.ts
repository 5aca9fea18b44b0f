import { type Span, SpanStatusCode } from '@opentelemetry/api';

/**
 * Marks a span failed by what was thrown: the exception event and an ERROR status with its message, as
 * OpenTelemetry records errors (https://opentelemetry.io/docs/specs/otel/trace/exceptions/).
 */
export function recordSpanFailure(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}
