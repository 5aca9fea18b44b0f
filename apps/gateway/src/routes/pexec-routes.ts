import { NvcfHeader } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { type AssetService, resolveAssetReferences } from '../assets/index.ts';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import { deliverWhenWritten } from '../http/after-response.ts';
import {
  type EventStreamDeps,
  eventStreamResponse,
  FROM_START,
  parseLastEventId,
} from '../http/event-stream-response.ts';
import { invocationResponse } from '../http/invocation-response.ts';
import { problemResponse } from '../http/problem-response.ts';
import { forwardedHeaders } from '../invocation/forwarded-headers.ts';
import { parseIdempotencyKey } from '../invocation/idempotency-key.ts';
import type { InvocationService, RequestAccess } from '../invocation/invocation-service.ts';
import { parsePollSeconds } from '../invocation/poll-seconds.ts';
import { principalId, requireRequestAccess } from '../invocation/request-access.ts';
import { parseInvocationBody } from '../invocation/request-body.ts';
import type { RequestCancellation } from '../invocation/request-cancellation.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** Without NVCF-POLL-SECONDS, an event stream stays open up to 20 minutes. */
const SSE_DEFAULT_SECONDS = 20 * 60;

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
}

/**
 * `POST /v2/nvcf/pexec/functions/{fid}[/versions/{vid}]`, `GET /v2/nvcf/pexec/status/{reqId}`, and
 * `DELETE /v2/nvcf/pexec/status/{reqId}` (a cancel: NVCF documents none, so it lives on the request's own URL).
 */
export function pexecRoutes(service: InvocationService, auth: Authenticator, opts: PexecRouteOptions): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const invoker = requireAuth(auth, 'invoke_function');
  const resultUrl = (c: Context<AuthEnv>) => (id: string) => opts.resultUrl(id, new URL(c.req.url).origin);

  const invoke = async (c: Context<AuthEnv>) => {
    const wantsEvents = /\btext\/event-stream\b/i.test(c.req.header('accept') ?? '');
    // SSE waits 20 minutes by default (NVCF behaviour: polling).
    const pollSeconds = parsePollSeconds(
      c.req.header('nvcf-poll-seconds'),
      wantsEvents ? SSE_DEFAULT_SECONDS : opts.defaultPollSeconds,
    );
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    const rawVersion = c.req.param('versionId');
    const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
    const body = await readRequestBody(c.req.raw, opts.maxBodyBytes);
    const input = parseInvocationBody(body, c.req.header('content-type'), {
      binaryExtension: c.req.header('inference-header-content-length') !== undefined,
    });
    const idempotency = parseIdempotencyKey(c.req.header('idempotency-key'), { functionId, versionId, body });
    // Unknown or foreign assets are a 404 before anything is queued (NVCF behaviour: assets).
    const assetIds = await resolveAssetReferences(c.req.header('nvcf-input-asset-references'), opts.assets, {
      ownerSubject: c.get('principal').subject,
    });
    const headers = forwardedHeaders(c.req.raw.headers, opts.forwardHeaders);
    const principal = principalId(c.get('principal'));
    const call = {
      body,
      principal,
      functionId,
      versionId,
      input,
      headers,
      assetIds,
      pollSeconds,
      signal: c.req.raw.signal,
      ...(idempotency ? { idempotency } : {}),
    };
    if (wantsEvents) {
      const { requestId, waiter } = await service.startStream(call);
      // This stream started the request: its client leaving stops the function.
      return eventStreamResponse(c, opts.streaming, requestId, waiter, resultUrl(c), { cancelOnLeave: true });
    }
    const outcome = await service.invoke(call);
    deliverWhenWritten(c, outcome, service.delivered);
    return invocationResponse(outcome, c.req.path, resultUrl(c));
  };

  app.post('/v2/nvcf/pexec/functions/:functionId', invoker, opts.limit, opts.waits, invoke);
  app.post('/v2/nvcf/pexec/functions/:functionId/versions/:versionId', invoker, opts.limit, opts.waits, invoke);

  app.get('/v2/nvcf/pexec/status/:requestId', invoker, opts.limit, opts.waits, async (c) => {
    const wantsEvents = /\btext\/event-stream\b/i.test(c.req.header('accept') ?? '');
    const pollSeconds = parsePollSeconds(
      c.req.header('nvcf-poll-seconds'),
      wantsEvents ? SSE_DEFAULT_SECONDS : opts.defaultPollSeconds,
    );
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const principal = c.get('principal');
    const authorize = (request: RequestAccess) => requireRequestAccess(principal, request);
    if (wantsEvents) {
      // Any gateway can serve a request's stream: its events live in Redis. A follower leaving does not
      // stop the function: only the stream that started it (or took it over) may. A reconnecting client resumes after the
      // last event it got (a pexec POST is a new request: it always reads from the start).
      const after = parseLastEventId(c.req.header('last-event-id'));
      const owner = await opts.streaming.store.owner(requestId);
      if (owner) authorize({ requestId, ...owner });
      const waiter = service.follow(requestId, pollSeconds, c.req.raw.signal);
      // A client resuming (Last-Event-ID) takes charge of the request: the stream it dropped no longer
      // cancels it once the grace is over, and its own leaving now does.
      const cancelOnLeave = after !== FROM_START;
      return eventStreamResponse(c, opts.streaming, requestId, waiter, resultUrl(c), { cancelOnLeave, after });
    }
    const outcome = await service.status(requestId, pollSeconds, { signal: c.req.raw.signal, authorize });
    deliverWhenWritten(c, outcome, service.delivered);
    return invocationResponse(outcome, c.req.path, resultUrl(c));
  });

  app.delete('/v2/nvcf/pexec/status/:requestId', invoker, opts.limit, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const principal = c.get('principal');
    const outcome = await opts.cancellation.cancel(requestId, (request) => requireRequestAccess(principal, request));
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
