import { errorCodeOfHttpStatus } from '@nvcf/protocol';
import { failureResult, type InvocationResult } from '@nvcf/queue';

/**
 * A server's 4xx/5xx as NVCF's worker answers it (NVCF worker, compatibility mode): problem+json from source
 * `inference-service` with the server's status, and as detail the server's JSON `error` string when it has one
 * (Triton's form), else `Inference error`.
 */
export function serverErrorResult(status: number, body: Buffer, requestId: string): InvocationResult {
  const detail = errorText(body) ?? 'Inference error';
  return failureResult(errorCodeOfHttpStatus(status), detail, { source: 'inference-service', requestId, status });
}

/** The server could not be reached or broke off (NVCF worker: `inference-connection`, 500). */
export function connectionErrorResult(requestId: string): InvocationResult {
  return failureResult('INTERNAL', 'Inference connection error while making inference request', {
    source: 'inference-connection',
    requestId,
  });
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
