import { NvcfHeader, NvcfStatus } from '@nvcf/protocol';
import type { InvocationOutcome } from '../invocation/invocation-service.ts';
import { relayedProblem } from '../invocation/relayed-problem.ts';
import { problemResponse } from './problem-response.ts';

/**
 * Outcome → HTTP, as NVCF answers pexec and status polls (NVCF API: invocation; NVCF behaviour:
 * statuses): the function's response verbatim with NVCF-REQID/NVCF-STATUS, or 202 with an empty body
 * while it runs.
 */
export function invocationResponse(
  outcome: InvocationOutcome,
  instance: string,
  resultUrl: (requestId: string) => string,
): Response {
  const { requestId } = outcome;
  if (outcome.kind === 'unknown') {
    return problemResponse(404, `Request '${requestId}' not found (unknown, expired or already delivered)`, {
      instance,
      requestId,
      headers: { [NvcfHeader.STATUS]: NvcfStatus.ERRORED },
    });
  }
  if (outcome.kind === 'pending') {
    if (outcome.partial) {
      // The function's latest partial response, as NVCF answers a poll after a progress update
      // (NVCF behaviour: progress).
      return new Response(new Uint8Array(outcome.partial), {
        status: 202,
        headers: {
          'content-type': 'application/json',
          [NvcfHeader.REQID]: requestId,
          [NvcfHeader.STATUS]: NvcfStatus.IN_PROGRESS,
          [NvcfHeader.PERCENT_COMPLETE]: String(outcome.percent),
        },
      });
    }
    return new Response(null, {
      status: 202,
      headers: {
        [NvcfHeader.REQID]: requestId,
        [NvcfHeader.STATUS]: NvcfStatus.IN_PROGRESS,
        [NvcfHeader.PERCENT_COMPLETE]: String(outcome.percent),
        // Clients read NVCF-REQID from the header; the body is empty, said plainly rather than chunked.
        'content-length': '0',
      },
    });
  }
  const result = relayedProblem(outcome.result, instance, requestId);
  if (result.ok && result.objectKey) {
    // Over the direct limit: a redirect to the stored zip (NVCF behaviour: results).
    return new Response(null, {
      status: 302,
      headers: {
        location: resultUrl(requestId),
        'content-length': '0',
        [NvcfHeader.REQID]: requestId,
        [NvcfHeader.STATUS]: NvcfStatus.FULFILLED,
        [NvcfHeader.PERCENT_COMPLETE]: '100',
      },
    });
  }
  const { ok } = result;
  return new Response(result.body.length > 0 ? new Uint8Array(result.body) : null, {
    status: result.status,
    headers: {
      ...result.headers,
      'content-type': result.contentType,
      [NvcfHeader.REQID]: requestId,
      [NvcfHeader.STATUS]: ok ? NvcfStatus.FULFILLED : NvcfStatus.ERRORED,
      ...(ok ? { [NvcfHeader.PERCENT_COMPLETE]: '100' } : {}),
    },
  });
}
