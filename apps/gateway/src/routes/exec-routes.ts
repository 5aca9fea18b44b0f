import { AppError } from '@nvcf/protocol';
import { nodeIncoming, readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { type AssetService, assetIds, resolveAssets } from '../assets/index.ts';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { principalKey, requireFunction } from '../auth/principal.ts';
import { deliverWhenWritten } from '../http/after-response.ts';
import { INVOCATION_PROBLEMS } from '../http/openapi-invocation.ts';
import { describeOperation, jsonContent, jsonResponse, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import {
  FUNCTION_ID,
  REQUEST_ID,
  RequestHeader,
  responseHeaders,
  uuidString,
  VERSION_ID,
} from '../http/openapi-schemas.ts';
import { parseIdempotencyKey } from '../invocation/idempotency-key.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import { parsePollSeconds } from '../invocation/poll-seconds.ts';
import type { RequestAccessCheck } from '../invocation/request-access.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { execEnvelopeResponse, InvokeFunctionResponse } from './exec-envelope.ts';

/** The legacy API's default wait (NVCF behaviour: polling): its POST blocked 5 s before answering pending. */
const EXEC_DEFAULT_POLL_SECONDS = 5;
/** The envelope's bound on `pollDurationSeconds`, as NVCF's API document sets it (pexec's header allows more). */
const EXEC_MAX_POLL_SECONDS = 300;

const RequestHeaderDto = z
  .object({
    inputAssetReferences: z
      .array(uuidString())
      .optional()
      .describe('Ids of the caller’s assets the function may read, as NVCF-INPUT-ASSET-REFERENCES on pexec.'),
    meteringData: z
      .array(z.object({ key: z.string(), value: z.string() }).meta({ id: 'MeteringDataEntryDto' }))
      .optional()
      .describe('NVCF’s billing entries: accepted and not used (a self-hosted NVCF meters nothing).'),
    pollDurationSeconds: z
      .number()
      .int()
      .min(0)
      .max(EXEC_MAX_POLL_SECONDS)
      .optional()
      .describe(`How long to wait before answering 202 (default ${EXEC_DEFAULT_POLL_SECONDS}; 0 counts as 1).`),
  })
  .meta({ id: 'RequestHeaderDto' });

/** The exec body, under NVCF's component name. */
const InvokeFunctionRequest = z
  .object({
    requestHeader: RequestHeaderDto.optional(),
    requestBody: z.unknown().describe('The function’s JSON input (a KServe V2 inference request for ONNX functions).'),
  })
  .meta({ id: 'InvokeFunctionRequest' });

const tag = 'Envelope Function Invocation';
const SCOPES = ['invoke_function'] as const;
const envelope = (description: string) => ({
  ...jsonResponse(description, InvokeFunctionResponse),
  headers: responseHeaders(['NVCF-REQID']),
});
/** A function's failure keeps its HTTP status, in the envelope (`errored`, `errorCode`). */
const FAILED = {
  400: envelope(`\`errored\`: ${INVOCATION_PROBLEMS.refused}`),
  404: envelope('`errored`: the version was deleted before the request ran.'),
  499: envelope(`\`errored\`: ${INVOCATION_PROBLEMS.cancelled}`),
  500: envelope(`\`errored\`: ${INVOCATION_PROBLEMS.failed}`),
};
const ANSWERS = {
  200: envelope('`fulfilled`, with `response` embedded, or `responseReference` for a result over the direct limit.'),
  202: envelope('`pending-evaluation`: poll `GET /v2/nvcf/exec/status/{requestId}` with `reqId`.'),
  ...FAILED,
};

const execSpec = (versioned: boolean): OperationSpec => ({
  tag,
  operationId: versioned ? 'execFunctionVersion' : 'execFunction',
  summary: versioned ? 'Invoke a function version (envelope)' : 'Invoke a function (envelope)',
  description:
    'The legacy envelope: `{requestHeader, requestBody}` in, `{reqId, status, response | responseReference}` out. ' +
    `Waits \`pollDurationSeconds\` (default ${EXEC_DEFAULT_POLL_SECONDS}) before answering 202.`,
  scopes: SCOPES,
  parameters: [FUNCTION_ID, ...(versioned ? [VERSION_ID] : []), RequestHeader.idempotencyKey],
  requestBody: { required: true, content: jsonContent(InvokeFunctionRequest) },
  responses: ANSWERS,
  problems: {
    400:
      'A body that is not JSON or not an envelope, an asset reference that is not a UUID, an invalid ' +
      `Idempotency-Key, a version that cannot be invoked. ${Reason.notUuid}`,
    403: Reason.functionNotAllowed,
    404:
      'Unknown function or version (another account’s, not shared with the caller’s, is unknown to it), or an ' +
      'unknown or foreign asset.',
    413: 'The body is over MAX_REQUEST_BODY_BYTES; the connection is closed.',
    422: 'The Idempotency-Key was already used by this credential with another body.',
    429: INVOCATION_PROBLEMS.tooMany,
    503: `${Reason.redis} Or: the first call with this Idempotency-Key is not recorded yet.`,
  },
});

const statusSpec: OperationSpec = {
  tag,
  operationId: 'getExecStatus',
  summary: 'Poll a request (envelope)',
  scopes: SCOPES,
  parameters: [REQUEST_ID, RequestHeader.pollSeconds(`default ${EXEC_DEFAULT_POLL_SECONDS}`)],
  responses: ANSWERS,
  problems: {
    400: `NVCF-POLL-SECONDS not an integer or over 3600. ${Reason.notUuid}`,
    403: 'The caller’s own request, on a function another account shared with the caller’s and no longer authorizes.',
    404:
      'Unknown or expired request, or its result was already delivered; or somebody else’s, or one on a function ' +
      'the credential is not allowed, answered alike (an operator, every scope in the gateway’s own account, may ' +
      'read any).',
    429: 'Too many requests: the credential’s rate limit or its open long-polls.',
  },
  problemHeaders: { 404: ['NVCF-REQID'] },
};

/**
 * `POST /v2/nvcf/exec/functions/{fid}[/versions/{vid}]` and `GET /v2/nvcf/exec/status/{reqId}` (NVCF
 * behaviour: exec envelope).
 */
export function execRoutes(
  service: InvocationService,
  auth: Authenticator,
  opts: {
    maxBodyBytes: number;
    limit: MiddlewareHandler<AuthEnv>;
    waits: MiddlewareHandler<AuthEnv>;
    resultUrl: (requestId: string, requestOrigin: string) => string;
    /** Assets named by `requestHeader.inputAssetReferences` must exist and belong to the caller. */
    assets: AssetService;
    /** Who may read an existing request. */
    requestAccess: RequestAccessCheck;
  },
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const invoker = requireAuth(auth, 'invoke_function');

  const exec = async (c: Context<AuthEnv>) => {
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    const rawVersion = c.req.param('versionId');
    const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
    const body = await readRequestBody(c.req.raw, opts.maxBodyBytes, nodeIncoming(c.env));
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new AppError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = InvokeFunctionRequest.safeParse(json);
    if (!parsed.success) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `invalid exec request: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`,
      );
    }
    // What NVCF clients send for bodies too large to inline: the same semantics as NVCF-INPUT-ASSET-REFERENCES on
    // pexec (unknown or foreign assets are a 404 before anything is queued; the function gets their ids).
    const references = assetIds(
      parsed.data.requestHeader?.inputAssetReferences ?? [],
      'requestHeader.inputAssetReferences',
    );
    const assets = await resolveAssets(references, opts.assets, { owner: principalKey(c.get('principal')) });
    const idempotency = parseIdempotencyKey(c.req.header('idempotency-key'), { functionId, versionId, body });
    const outcome = await service.invoke({
      ...(idempotency ? { idempotency } : {}),
      principal: principalKey(c.get('principal')),
      ncaId: c.get('principal').ncaId,
      functionId,
      versionId,
      input: { kind: 'json', contentType: 'application/json', value: parsed.data.requestBody },
      headers: {},
      ...(assets.length > 0 ? { assetIds: assets } : {}),
      pollSeconds: Math.max(1, parsed.data.requestHeader?.pollDurationSeconds ?? EXEC_DEFAULT_POLL_SECONDS),
      signal: c.req.raw.signal,
    });
    deliverWhenWritten(c, outcome, service.delivered);
    return execEnvelopeResponse(outcome, c.req.path, (id) => opts.resultUrl(id, new URL(c.req.url).origin));
  };
  app.post(
    '/v2/nvcf/exec/functions/:functionId',
    describeOperation(execSpec(false)),
    invoker,
    opts.limit,
    opts.waits,
    exec,
  );
  app.post(
    '/v2/nvcf/exec/functions/:functionId/versions/:versionId',
    describeOperation(execSpec(true)),
    invoker,
    opts.limit,
    opts.waits,
    exec,
  );

  const status = describeOperation(statusSpec);
  app.get('/v2/nvcf/exec/status/:requestId', status, invoker, opts.limit, opts.waits, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const pollSeconds = parsePollSeconds(c.req.header('nvcf-poll-seconds'), EXEC_DEFAULT_POLL_SECONDS);
    const principal = c.get('principal');
    const outcome = await service.status(requestId, pollSeconds, {
      signal: c.req.raw.signal,
      authorize: (request) => opts.requestAccess(principal, request),
    });
    deliverWhenWritten(c, outcome, service.delivered);
    return execEnvelopeResponse(outcome, c.req.path, (id) => opts.resultUrl(id, new URL(c.req.url).origin));
  });
  return app;
}
