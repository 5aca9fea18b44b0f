import { NvcfHeader } from '@nvcf/protocol';
import { nodeIncoming, readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { type AssetService, resolveAssetReferences } from '../assets/index.ts';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { principalKey, requireFunction } from '../auth/principal.ts';
import { deliverWhenWritten } from '../http/after-response.ts';
import {
  type EventStreamDeps,
  eventStreamResponse,
  FROM_START,
  parseLastEventId,
} from '../http/event-stream-response.ts';
import { invocationResponse } from '../http/invocation-response.ts';
import { INVOCATION_PROBLEMS, INVOCATION_RESPONSES } from '../http/openapi-invocation.ts';
import { describeOperation, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, REQUEST_ID, RequestHeader, responseHeaders, VERSION_ID } from '../http/openapi-schemas.ts';
import { problemResponse } from '../http/problem-response.ts';
import { forwardedHeaderNames, forwardedHeaders } from '../invocation/forwarded-headers.ts';
import { parseIdempotencyKey } from '../invocation/idempotency-key.ts';
import type { InvocationService, InvokeRequest, RequestAccess } from '../invocation/invocation-service.ts';
import { parsePollSeconds } from '../invocation/poll-seconds.ts';
import type { RequestAccessCheck } from '../invocation/request-access.ts';
import { parseInvocationBody } from '../invocation/request-body.ts';
import type { RequestCancellation } from '../invocation/request-cancellation.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** Without NVCF-POLL-SECONDS, an event stream stays open up to 20 minutes. */
const SSE_DEFAULT_SECONDS = 20 * 60;

const tag = 'Function Invocation';
const SCOPES = ['invoke_function'] as const;
const POLL = RequestHeader.pollSeconds(
  `default: DEFAULT_POLL_SECONDS, 60; ${SSE_DEFAULT_SECONDS / 60} minutes for SSE`,
);
/** A relayed failure of the function carries the request's headers. */
const RELAYED = ['NVCF-REQID', 'NVCF-STATUS'] as const;

const invokeSpec = (versioned: boolean): OperationSpec => ({
  tag,
  operationId: versioned ? 'invokeFunctionVersion' : 'invokeFunction',
  summary: versioned ? 'Invoke a function version' : 'Invoke a function',
  description:
    `${versioned ? 'Runs the request on this version.' : 'Runs the request on a deployed version of the function (preferring versions a worker serves now).'} ` +
    'Waits up to `NVCF-POLL-SECONDS` for the answer: 200 with it, else 202 with `NVCF-REQID` to poll ' +
    '`GET /v2/nvcf/pexec/status/{requestId}`. `Accept: text/event-stream` streams the function’s events.',
  scopes: SCOPES,
  parameters: [
    FUNCTION_ID,
    ...(versioned ? [VERSION_ID] : []),
    POLL,
    RequestHeader.assetReferences,
    RequestHeader.idempotencyKey,
    RequestHeader.inferenceHeaderContentLength,
  ],
  requestBody: {
    required: true,
    description:
      'The function’s input, passed on as sent: a KServe V2 inference request for ONNX functions (JSON, or with the ' +
      'binary tensor data extension), an OpenAI chat or completion request for LLM-shaped functions, or the ' +
      'function’s own format. A body without Content-Type is read as JSON.',
    content: {
      'application/json': { schema: { description: 'KServe V2 inference request, or the function’s own JSON.' } },
      'application/octet-stream': { schema: { description: 'Bytes, e.g. a binary tensor data extension body.' } },
      '*/*': { schema: { description: 'Any other content type, passed on as bytes.' } },
    },
  },
  responses: INVOCATION_RESPONSES,
  problems: {
    400:
      'NVCF-POLL-SECONDS not an integer or over 3600, an invalid Idempotency-Key, an asset reference that is not a ' +
      `UUID, an empty body or invalid JSON, a version that cannot be invoked (not deployed, or DEPLOYING with minInstances above 0). ${Reason.notUuid} ` +
      `Or: ${INVOCATION_PROBLEMS.refused}`,
    403: Reason.functionNotAllowed,
    404:
      'Unknown function or version (another account’s, not shared with the caller’s, is unknown to it), or an unknown ' +
      'or foreign asset; or the version was deleted before the request ran.',
    413: 'The body is over MAX_REQUEST_BODY_BYTES; the connection is closed.',
    422: 'The Idempotency-Key was already used by this credential with another body.',
    429: INVOCATION_PROBLEMS.tooMany,
    499: `${INVOCATION_PROBLEMS.cancelled} This call was waiting for it.`,
    500: INVOCATION_PROBLEMS.failed,
    503: `${Reason.redis} Or: the first call with this Idempotency-Key is not recorded yet.`,
  },
  problemHeaders: { 400: RELAYED, 404: RELAYED, 499: RELAYED, 500: RELAYED },
});

const statusSpec: OperationSpec = {
  tag,
  operationId: 'getInvocationStatus',
  summary: 'Poll or stream a request',
  description:
    'Long-polls the request (any gateway replica): 200 with the answer (delivered once: the id then answers 404), ' +
    '202 to poll again, 302 for a large result. `Accept: text/event-stream` streams its events; with ' +
    '`Last-Event-ID` it resumes after that event and takes charge of the request.',
  scopes: SCOPES,
  parameters: [REQUEST_ID, POLL, RequestHeader.lastEventId],
  responses: INVOCATION_RESPONSES,
  problems: {
    400: `NVCF-POLL-SECONDS not an integer or over 3600. ${Reason.notUuid} Or: ${INVOCATION_PROBLEMS.refused}`,
    403: 'The caller’s own request, on a function another account shared with the caller’s and no longer authorizes.',
    404:
      'Unknown or expired request, or its result was already delivered; or somebody else’s, or one on a function ' +
      'the credential is not allowed, answered alike (an operator, every scope in the gateway’s own account, may ' +
      'read any).',
    429: 'Too many requests: the credential’s rate limit or its open long-polls and streams.',
    499: INVOCATION_PROBLEMS.cancelled,
    500: INVOCATION_PROBLEMS.failed,
  },
  problemHeaders: { 400: RELAYED, 404: RELAYED, 499: RELAYED, 500: RELAYED },
};

const cancelSpec: OperationSpec = {
  tag,
  operationId: 'cancelInvocation',
  summary: 'Cancel a request',
  description:
    'Ours (NVCF documents no cancel). Every later poll, stream or exec status read answers 499; a queued request ' +
    'leaves its queue; a decoupled model stops before its next response; a plain model’s run in progress finishes ' +
    'and its answer is discarded.',
  scopes: SCOPES,
  parameters: [REQUEST_ID],
  responses: { 204: { description: 'Cancelled.', headers: responseHeaders(['NVCF-REQID']) } },
  problems: {
    400: Reason.notUuid,
    403: 'The caller’s own request, on a function another account shared with the caller’s and no longer authorizes.',
    404:
      'Unknown or expired request, or its result was already delivered; or somebody else’s, answered alike (an ' +
      'operator may cancel any).',
    409: 'The request already has its answer.',
    429: 'The credential’s rate limit.',
  },
  problemHeaders: { 404: ['NVCF-REQID'], 409: ['NVCF-REQID'] },
};

export interface PexecRouteOptions {
  maxBodyBytes: number;
  defaultPollSeconds: number;
  /** Reading a streaming request's events (SSE). */
  streaming: EventStreamDeps;
  /** Assets named by `NVCF-INPUT-ASSET-REFERENCES` must exist and belong to the caller. */
  assets: AssetService;
  /** The signed URL of a stored large result (302 Location). */
  resultUrl: (requestId: string, requestOrigin: string) => string;
  /** Per-credential rate limit: invocations, polls and streams all count. */
  limit: MiddlewareHandler<AuthEnv>;
  /** Per-credential cap on open long-polls and streams. */
  waits: MiddlewareHandler<AuthEnv>;
  /** Client headers passed to functions besides the defaults. */
  forwardHeaders: readonly string[];
  /** An owner's explicit cancel of a request. */
  cancellation: RequestCancellation;
  /** Who may read, follow and cancel an existing request. */
  requestAccess: RequestAccessCheck;
}

/** What the pexec registrars share. */
interface PexecRouteDeps {
  service: InvocationService;
  opts: PexecRouteOptions;
  invoker: MiddlewareHandler<AuthEnv>;
}

/** Whether the client asked for the answer as server-sent events. */
const wantsEventsOf = (c: Context<AuthEnv>) => /\btext\/event-stream\b/i.test(c.req.header('accept') ?? '');

/** The signed URL of a stored large result, as seen from the request's origin. */
const resultUrlOf = (opts: PexecRouteOptions, c: Context<AuthEnv>) => (id: string) =>
  opts.resultUrl(id, new URL(c.req.url).origin);

/**
 * `POST /v2/nvcf/pexec/functions/{fid}[/versions/{vid}]`, `GET /v2/nvcf/pexec/status/{reqId}`, and
 * `DELETE /v2/nvcf/pexec/status/{reqId}` (a cancel: NVCF documents none, so it lives on the request's own URL).
 * Hono matches routes in registration order, so the parts are composed in the order their routes were always
 * registered.
 */
export function pexecRoutes(service: InvocationService, auth: Authenticator, opts: PexecRouteOptions): Hono<AuthEnv> {
  const deps: PexecRouteDeps = { service, opts, invoker: requireAuth(auth, 'invoke_function') };
  const app = new Hono<AuthEnv>();
  app.route('/', pexecInvokeRoutes(deps));
  app.route('/', pexecStatusRoutes(deps));
  app.route('/', pexecCancelRoutes(deps));
  return app;
}

/** `POST` of an invocation, of a function or of one of its versions. */
function pexecInvokeRoutes({ service, opts, invoker }: PexecRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const forwardNames = forwardedHeaderNames(opts.forwardHeaders);

  const invoke = async (c: Context<AuthEnv>) => {
    const wantsEvents = wantsEventsOf(c);
    // SSE waits 20 minutes by default (NVCF behaviour: polling).
    const pollSeconds = parsePollSeconds(
      c.req.header('nvcf-poll-seconds'),
      wantsEvents ? SSE_DEFAULT_SECONDS : opts.defaultPollSeconds,
    );
    const call = await invokeRequestOf(c, opts, forwardNames, pollSeconds);
    if (wantsEvents) {
      const { requestId, waiter } = await service.startStream(call);
      // This stream started the request: its client leaving stops the function.
      return eventStreamResponse(c, opts.streaming, requestId, waiter, resultUrlOf(opts, c), { cancelOnLeave: true });
    }
    const outcome = await service.invoke(call);
    deliverWhenWritten(c, outcome, service.delivered);
    return invocationResponse(outcome, c.req.path, resultUrlOf(opts, c));
  };

  app.post(
    '/v2/nvcf/pexec/functions/:functionId',
    describeOperation(invokeSpec(false)),
    invoker,
    opts.limit,
    opts.waits,
    invoke,
  );
  app.post(
    '/v2/nvcf/pexec/functions/:functionId/versions/:versionId',
    describeOperation(invokeSpec(true)),
    invoker,
    opts.limit,
    opts.waits,
    invoke,
  );
  return app;
}

/** The invocation a pexec POST asks for: its path, body, headers and referenced assets, parsed and checked. */
async function invokeRequestOf(
  c: Context<AuthEnv>,
  opts: PexecRouteOptions,
  forwardNames: ReturnType<typeof forwardedHeaderNames>,
  pollSeconds: number,
): Promise<InvokeRequest> {
  const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
  requireFunction(c.get('principal'), functionId);
  const rawVersion = c.req.param('versionId');
  const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
  const body = await readRequestBody(c.req.raw, opts.maxBodyBytes, nodeIncoming(c.env));
  const input = parseInvocationBody(body, c.req.header('content-type'), {
    binaryExtension: c.req.header('inference-header-content-length') !== undefined,
  });
  const idempotency = parseIdempotencyKey(c.req.header('idempotency-key'), { functionId, versionId, body });
  // Unknown or foreign assets are a 404 before anything is queued (NVCF behaviour: assets).
  const assetIds = await resolveAssetReferences(c.req.header('nvcf-input-asset-references'), opts.assets, {
    owner: principalKey(c.get('principal')),
  });
  const headers = forwardedHeaders(c.req.raw.headers, forwardNames);
  const principal = principalKey(c.get('principal'));
  return {
    body,
    principal,
    ncaId: c.get('principal').ncaId,
    functionId,
    versionId,
    input,
    headers,
    containerHeaders: () => forwardedHeaders(c.req.raw.headers, 'all'),
    assetIds,
    pollSeconds,
    signal: c.req.raw.signal,
    ...(idempotency ? { idempotency } : {}),
  };
}

/** `GET` of a request's status: a long-poll, or its event stream. */
function pexecStatusRoutes({ service, opts, invoker }: PexecRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const status = describeOperation(statusSpec);
  app.get('/v2/nvcf/pexec/status/:requestId', status, invoker, opts.limit, opts.waits, async (c) => {
    const wantsEvents = wantsEventsOf(c);
    const pollSeconds = parsePollSeconds(
      c.req.header('nvcf-poll-seconds'),
      wantsEvents ? SSE_DEFAULT_SECONDS : opts.defaultPollSeconds,
    );
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const principal = c.get('principal');
    const authorize = (request: RequestAccess) => opts.requestAccess(principal, request);
    const resultUrl = resultUrlOf(opts, c);
    if (wantsEvents) {
      // Any gateway can serve a request's stream: its events live in Redis. A follower leaving does not
      // stop the function: only the stream that started it (or took it over) may. A reconnecting client resumes after the
      // last event it got (a pexec POST is a new request: it always reads from the start).
      const after = parseLastEventId(c.req.header('last-event-id'));
      const waiter = await service.follow(requestId, pollSeconds, { signal: c.req.raw.signal, authorize });
      // Someone else's request is answered as an unknown one (what the stream below answers for that).
      if (!waiter) return invocationResponse({ kind: 'unknown', requestId }, c.req.path, resultUrl);
      // A client resuming (Last-Event-ID) takes charge of the request: the stream it dropped no longer
      // cancels it once the grace is over, and its own leaving now does.
      const cancelOnLeave = after !== FROM_START;
      return eventStreamResponse(c, opts.streaming, requestId, waiter, resultUrl, { cancelOnLeave, after });
    }
    const outcome = await service.status(requestId, pollSeconds, { signal: c.req.raw.signal, authorize });
    deliverWhenWritten(c, outcome, service.delivered);
    return invocationResponse(outcome, c.req.path, resultUrl);
  });
  return app;
}

/** `DELETE` of a request: its owner's cancel. */
function pexecCancelRoutes({ opts, invoker }: PexecRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.delete('/v2/nvcf/pexec/status/:requestId', describeOperation(cancelSpec), invoker, opts.limit, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const principal = c.get('principal');
    const outcome = await opts.cancellation.cancel(requestId, (request) => opts.requestAccess(principal, request));
    const instance = c.req.path;
    if (outcome === 'unknown') {
      return problemResponse(404, `Request '${requestId}' not found (unknown, expired or already delivered)`, {
        instance,
        requestId,
      });
    }
    if (outcome === 'finished') {
      return problemResponse(409, `Request '${requestId}' already finished: it can no longer be cancelled`, {
        instance,
        requestId,
      });
    }
    return c.body(null, 204, { [NvcfHeader.REQID]: requestId });
  });
  return app;
}
