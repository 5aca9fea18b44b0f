import { type ErrorCode, errorCodeInfo, PROBLEM_CONTENT_TYPE, problem } from '@nvcf/protocol';
import type { InvocationResult } from '@nvcf/queue';

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
  const status = errorCodeInfo[code].http;
  const body = problem(status, detail, { source, requestId });
  return { status, code, contentType: PROBLEM_CONTENT_TYPE, body: Buffer.from(JSON.stringify(body)) };
}
