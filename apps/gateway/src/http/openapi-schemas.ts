import { MAX_POLL_SECONDS, NvcfStatus } from '@nvcf/protocol';
import type { DescribeRouteOptions } from 'hono-openapi';
import { z } from 'zod';

/**
 * What the gateway's OpenAPI document shares between routes: the problem+json body, and the NVCF request and
 * response headers (NVCF API reference: request and response headers). Each route declares its own bodies next to
 * itself; a `.meta({ id })` makes a zod schema a component (`#/components/schemas/<id>`).
 */

/** A UUID string, as the document states it (the routes check ids with `uuidParam`). */
export const uuidString = () => z.string().meta({ format: 'uuid' });
/** An ISO 8601 timestamp. */
export const timestamp = () => z.string().meta({ format: 'date-time' });

/** RFC 7807 problem details with NVCF's fields: every error the gateway itself answers. */
export const Problem = z
  .object({
    type: z
      .string()
      .describe(
        '`urn:<source>:problem-details:<title>`; the source says who refused: `nvcf-gateway`, ' +
          '`inference-service` (the model), `nvcf-worker-service` (the worker).',
      ),
    title: z.string().describe('The HTTP status phrase.'),
    status: z.number().int().describe('The HTTP status.'),
    detail: z.string().describe('What went wrong, for a human.'),
    instance: z.string().optional().describe('The path the client called.'),
    requestId: z.string().optional().describe('The invocation request id, when there is one.'),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 7807 problem details (`application/problem+json`). A function may add fields of its own.',
  });

type Parameter = NonNullable<DescribeRouteOptions['parameters']>[number];
type ParameterSchema = Record<string, unknown>;

/** An optional request header, as a `describeRoute` parameter. */
export const headerParam = (name: string, description: string, schema: ParameterSchema): Parameter => ({
  in: 'header',
  name,
  required: false,
  description,
  schema,
});

const UUID = { type: 'string', format: 'uuid' } as const;

/** A UUID path parameter (anything else is a 400 before it reaches Redis). */
export function uuidPath(name: string, description: string): Parameter {
  return { in: 'path', name, required: true, description, schema: UUID };
}

export const FUNCTION_ID = uuidPath('functionId', 'The function id.');
export const VERSION_ID = uuidPath('versionId', 'The function version id.');
export const REQUEST_ID = uuidPath('requestId', 'The invocation request id (`NVCF-REQID`).');

/** Request headers, as `describeRoute` parameters. */
export const RequestHeader = {
  pollSeconds: (defaultSeconds: string) =>
    headerParam(
      'NVCF-POLL-SECONDS',
      `How long to wait for the result before answering 202 (${defaultSeconds}); values below 1 count as 1. ` +
        `Over ${MAX_POLL_SECONDS}: 400.`,
      { type: 'integer', maximum: MAX_POLL_SECONDS },
    ),
  assetReferences: headerParam(
    'NVCF-INPUT-ASSET-REFERENCES',
    'Comma-separated ids of the caller’s uploaded assets the function may read (an input names one with ' +
      '`"parameters": {"nvcf_asset_id": "<id>"}`). An unknown or foreign asset is a 404 before anything is queued.',
    { type: 'string', example: '0b5d5d6e-6a2b-4b8f-9bb6-8d3c8f5e6a10' },
  ),
  idempotencyKey: headerParam(
    'Idempotency-Key',
    'Makes a retry safe (IETF httpapi Idempotency-Key draft; quoted or bare, 1–255 printable characters): the same ' +
      'key and body from the same credential within the request TTL find the request the first call started. The ' +
      'same key with another body: 422.',
    { type: 'string', minLength: 1, maxLength: 257 },
  ),
  lastEventId: headerParam(
    'Last-Event-ID',
    'With `Accept: text/event-stream`: resume after this event (the `id:` of the last event received); a value ' +
      'that is not an event id reads from the start.',
    { type: 'string', example: '1795531370357-1' },
  ),
  inferenceHeaderContentLength: headerParam(
    'Inference-Header-Content-Length',
    'KServe V2 binary tensor data extension: the length of the JSON part; the raw tensor bytes follow it. The body ' +
      'then travels to the function as bytes, whatever its Content-Type.',
    { type: 'integer', minimum: 0 },
  ),
} as const;

/** The query of a URL the gateway signed (HMAC-SHA256, expiring): it is the authorization. */
export const SIGNED_URL_QUERY: Parameter[] = [
  {
    in: 'query',
    name: 'expires',
    required: true,
    description: 'Expiry, Unix seconds.',
    schema: { type: 'integer' },
  },
  {
    in: 'query',
    name: 'signature',
    required: true,
    description: 'The URL’s signature.',
    schema: { type: 'string' },
  },
];

type Headers = NonNullable<
  Exclude<NonNullable<DescribeRouteOptions['responses']>[string], { $ref: string }>['headers']
>;
type HeaderObject = Exclude<Headers[string], { $ref: string }>;

const RESPONSE_HEADERS = {
  'NVCF-REQID': {
    description: 'The request id: poll `GET /v2/nvcf/pexec/status/{requestId}` with it.',
    schema: UUID,
  },
  'NVCF-STATUS': {
    description: 'Where the request stands.',
    schema: { type: 'string', enum: Object.values(NvcfStatus) },
  },
  'NVCF-PERCENT-COMPLETE': {
    description: 'Progress the function reported, 0–100 (100 once fulfilled).',
    schema: { type: 'integer', minimum: 0, maximum: 100 },
  },
  Location: {
    description: 'Signed, expiring (1 h) URL of the stored result: a zip holding `<requestId>.response`.',
    schema: { type: 'string', format: 'uri' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': { description: '`Bearer`.', schema: { type: 'string' } },
} satisfies Record<string, HeaderObject>;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** Response header objects: `required` ones are always sent, the others when they apply. */
export function responseHeaders(
  required: readonly ResponseHeaderName[],
  optional: readonly ResponseHeaderName[] = [],
): Headers {
  const out: Headers = {};
  for (const name of required) out[name] = { ...RESPONSE_HEADERS[name], required: true };
  for (const name of optional) out[name] = { ...RESPONSE_HEADERS[name], required: false };
  return out;
}
