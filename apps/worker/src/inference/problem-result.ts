import { PROBLEM_CONTENT_TYPE, problem } from '@nvcf/protocol';
import type { InvocationResult } from '@nvcf/queue';

/**
 * A failure as the function's response (NVCF behaviour: function failures): `inference-service` when the model refused
 * the request, `nvcf-worker-service` when the worker itself failed.
 */
export function problemResult(
  status: number,
  detail: string,
  source: 'inference-service' | 'nvcf-worker-service',
  requestId: string,
): InvocationResult {
  const body = problem(status, detail, { source, requestId });
  return { status, contentType: PROBLEM_CONTENT_TYPE, body: Buffer.from(JSON.stringify(body)) };
}
