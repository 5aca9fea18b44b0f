import { z } from 'zod';
import { uuidString } from '../http/openapi-schemas.ts';
import { problemResponse } from '../http/problem-response.ts';
import type { InvocationOutcome } from '../invocation/invocation-service.ts';
import { relayedProblem } from '../invocation/relayed-problem.ts';

/** The envelope's body, under NVCF's component name. */
export const InvokeFunctionResponse = z
  .object({
    reqId: uuidString(),
    status: z.enum(['errored', 'in-progress', 'fulfilled', 'pending-evaluation', 'rejected']),
    response: z
      .string()
      .optional()
      .describe(
        'The function’s answer as text (JSON as its text: `JSON.parse` it); a body that is neither JSON nor text, ' +
          'base64. On `errored`, its error body.',
      ),
    responseReference: z
      .string()
      .meta({ format: 'uri' })
      .optional()
      .describe('A result over the direct limit: its signed URL (`GET /v2/nvcf/results/{requestId}`).'),
    percentComplete: z.number().int().min(0).max(100).optional(),
    errorCode: z.number().int().optional().describe('On `errored`: the function’s HTTP status.'),
  })
  .meta({ id: 'InvokeFunctionResponse' });

/**
 * The legacy exec envelope (NVCF behaviour: exec envelope): `{reqId, status, response | responseReference,
 * percentComplete, errorCode}`, with the function's answer as a string, as NVCF's `InvokeFunctionResponse.response`
 * is (NVCF API reference: exec): its JSON or text as text, other bytes as base64. While waiting the status is
 * `pending-evaluation`, the value the clients of this API poll on (NVCF behaviour: statuses).
 */
export function execEnvelopeResponse(
  outcome: InvocationOutcome,
  instance: string,
  resultUrl: (requestId: string) => string,
): Response {
  const { requestId: reqId } = outcome;
  const headers = { 'nvcf-reqid': reqId };
  if (outcome.kind === 'unknown') {
    return problemResponse(404, `Request '${reqId}' not found (unknown, expired or already delivered)`, {
      instance,
      requestId: reqId,
    });
  }
  if (outcome.kind === 'pending') {
    return Response.json(
      { reqId, status: 'pending-evaluation', percentComplete: outcome.percent },
      { status: 202, headers },
    );
  }
  const result = relayedProblem(outcome.result, instance, reqId);
  if (result.objectKey) {
    // A large result is referenced, not embedded (200 with responseReference; NVCF behaviour: results).
    return Response.json(
      { reqId, status: 'fulfilled', responseReference: resultUrl(reqId), percentComplete: 100 },
      { status: 200, headers },
    );
  }
  const textual = /json/i.test(result.contentType) || /^text\//i.test(result.contentType);
  const response = result.body.toString(textual ? 'utf8' : 'base64');
  if (result.status < 400) {
    return Response.json({ reqId, status: 'fulfilled', response }, { status: result.status, headers });
  }
  return Response.json(
    { reqId, status: 'errored', errorCode: result.status, response },
    { status: result.status, headers },
  );
}
