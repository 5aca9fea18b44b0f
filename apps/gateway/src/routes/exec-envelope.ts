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
      .unknown()
      .optional()
      .describe(
        'The function’s answer: its JSON embedded, text as a string, anything else base64. On `errored`, its error ' +
          'body. NVCF’s document types it a string, but its service embeds JSON, and NVIDIA’s own envelope client ' +
          '(CUDA-Q) reads it as an object.',
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
 * percentComplete, errorCode}`, with the function's JSON answer embedded. While waiting the status is
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
  const text = result.body.toString('utf8');
  let response: unknown = text;
  if (/json/i.test(result.contentType)) {
    try {
      response = JSON.parse(text);
    } catch {
      // not JSON after all: embedded as text
    }
  } else if (!/^text\//i.test(result.contentType)) {
    response = result.body.toString('base64');
  }
  if (result.ok) {
    return Response.json({ reqId, status: 'fulfilled', response }, { status: result.status, headers });
  }
  return Response.json(
    { reqId, status: 'errored', errorCode: result.status, response },
    { status: result.status, headers },
  );
}
