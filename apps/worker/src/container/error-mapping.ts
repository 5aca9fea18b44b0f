import { PROBLEM_CONTENT_TYPE, problem } from '@nvcf/protocol';
import type { InvocationResult } from '@nvcf/queue';

/**
 * A server's 4xx/5xx as NVCF's worker answers it (NVCF worker, compatibility mode): problem+json from source
 * `inference-service` with the server's status, and as detail the server's JSON `error` string when it has one
 * (Triton's form), else `Inference error`.
 */
export function serverErrorResult(status: number, body: Buffer, requestId: string): InvocationResult {
  const detail = errorText(body) ?? 'Inference error';
  const rendered = problem(status, detail, { source: 'inference-service', requestId });
  return { status, contentType: PROBLEM_CONTENT_TYPE, body: Buffer.from(JSON.stringify(rendered)) };
}

/** The server could not be reached or broke off (NVCF worker: `inference-connection`, 500). */
export function connectionErrorResult(requestId: string): InvocationResult {
  const rendered = problem(500, 'Inference connection error while making inference request', {
    source: 'inference-connection',
    requestId,
  });
  return { status: 500, contentType: PROBLEM_CONTENT_TYPE, body: Buffer.from(JSON.stringify(rendered)) };
}

function errorText(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && 'error' in parsed && typeof parsed.error === 'string') {
      return parsed.error;
    }
  } catch {
    // Not JSON: the generic detail.
  }
  return undefined;
}
