import type { ErrorCode } from '@nvcf/protocol';
import { failureResult, type InvocationResult } from '@nvcf/queue';

/**
 * A failure as the function's response (NVCF behaviour: function failures): `inference-service` when the model refused
 * the request, `nvcf-worker-service` when the worker itself failed. Rendered as problem+json with the code's HTTP
 * status; the code itself travels beside it, for callers on other protocols (gRPC).
 */
export function problemResult(
  code: ErrorCode,
  detail: string,
  source: 'inference-service' | 'nvcf-worker-service',
  requestId: string,
): InvocationResult {
  return failureResult(code, detail, { source, requestId });
}
