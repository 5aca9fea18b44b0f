import type { ResponsesWithResolver } from 'hono-openapi';
import { responseHeaders } from './openapi-schemas.ts';

/**
 * The answers of an invocation (pexec) and of its status polls, as NVCF gives them (NVCF API: invocation; NVCF
 * behaviour: statuses, results, progress): the function's own answer, a 202 to poll again, a 302 to a stored
 * large result, or the function's events.
 */

const EVENTS =
  'With `Accept: text/event-stream`: the function’s events as server-sent events, sent from its first event ' +
  '(`data: <event>` and `id: <event id>` for `Last-Event-ID`), ending with its last; a failure after the start is ' +
  '`event: error` carrying the problem+json. A request refused before any output is answered as without SSE.';

export const INVOCATION_RESPONSES: ResponsesWithResolver = {
  200: {
    description:
      'Fulfilled: the function’s answer with its own status and content type (a KServe V2 inference response for ' +
      `ONNX functions; an OpenAI completion for LLM-shaped requests). ${EVENTS}`,
    headers: responseHeaders(['NVCF-REQID', 'NVCF-STATUS'], ['NVCF-PERCENT-COMPLETE']),
    content: {
      'application/json': { schema: { description: 'The function’s JSON answer.' } },
      'text/event-stream': { schema: { type: 'string', description: 'Server-sent events.' } },
      '*/*': { schema: { description: 'Any other answer of the function, byte for byte.' } },
    },
  },
  202: {
    description:
      'Not done within the window: poll `GET /v2/nvcf/pexec/status/{requestId}` with `NVCF-REQID`. Empty body, or the ' +
      'function’s latest partial response when it reported progress.',
    headers: responseHeaders(['NVCF-REQID', 'NVCF-STATUS', 'NVCF-PERCENT-COMPLETE']),
    content: { 'application/json': { schema: { description: 'The latest partial response.' } } },
  },
  302: {
    description:
      'Fulfilled with a result over the direct limit (MAX_DIRECT_RESULT_BYTES): `Location` is a signed URL of a zip ' +
      'holding `<requestId>.response` (`GET /v2/nvcf/results/{requestId}`, no credential). Empty body.',
    headers: responseHeaders(['Location', 'NVCF-REQID', 'NVCF-STATUS', 'NVCF-PERCENT-COMPLETE']),
  },
};

/** Why an invocation or a poll of it answers each problem status (beyond those of a bad id or header). */
export const INVOCATION_PROBLEMS = {
  cancelled: 'The request was cancelled by its owner (`DELETE /v2/nvcf/pexec/status/{requestId}`).',
  failed: 'The worker failed the request after its retries (`urn:nvcf-worker-service:…`).',
  refused:
    'The function refused the request (`urn:inference-service:…`: wrong datatype, shape, element count, missing or ' +
    'unknown input or output).',
  tooMany:
    'Too many requests: the credential’s or its account’s rate limit (RATE_LIMIT_PER_MINUTE, ' +
    'RATE_LIMIT_PER_ACCOUNT_PER_MINUTE), its open long-polls and streams ' +
    '(MAX_OPEN_REQUESTS_PER_CREDENTIAL), the version’s queue is full (MAX_QUEUE_DEPTH), or the bytes waiting in ' +
    'the queues reach the account’s or the version’s bound (MAX_QUEUE_BYTES_PER_ACCOUNT, MAX_QUEUE_BYTES_PER_VERSION).',
} as const;
