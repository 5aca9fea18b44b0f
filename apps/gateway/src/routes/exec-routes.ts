import { AppError, MAX_POLL_SECONDS } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { type AssetService, assetIds, resolveAssets } from '../assets/index.ts';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import { deliverWhenWritten } from '../http/after-response.ts';
import { parseIdempotencyKey } from '../invocation/idempotency-key.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import { parsePollSeconds } from '../invocation/poll-seconds.ts';
import { principalId, requireRequestAccess } from '../invocation/request-access.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { execEnvelopeResponse } from './exec-envelope.ts';

/** The legacy API's default wait (NVCF behaviour: polling): its POST blocked 5 s before answering pending. */
const EXEC_DEFAULT_POLL_SECONDS = 5;

const ExecRequest = z.object({
  requestHeader: z
    .object({
      inputAssetReferences: z.array(z.string()).optional(),
      pollDurationSeconds: z.number().int().min(0).max(MAX_POLL_SECONDS).optional(),
    })
    .optional(),
  requestBody: z.unknown(),
});

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
  },
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const invoker = requireAuth(auth, 'invoke_function');

  const exec = async (c: Context<AuthEnv>) => {
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    const rawVersion = c.req.param('versionId');
    const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
    const body = await readRequestBody(c.req.raw, opts.maxBodyBytes);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new AppError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = ExecRequest.safeParse(json);
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
    const assets = await resolveAssets(references, opts.assets, { ownerSubject: c.get('principal').subject });
    const idempotency = parseIdempotencyKey(c.req.header('idempotency-key'), { functionId, versionId, body });
    const outcome = await service.invoke({
      ...(idempotency ? { idempotency } : {}),
      principal: principalId(c.get('principal')),
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
  app.post('/v2/nvcf/exec/functions/:functionId', invoker, opts.limit, opts.waits, exec);
  app.post('/v2/nvcf/exec/functions/:functionId/versions/:versionId', invoker, opts.limit, opts.waits, exec);

  app.get('/v2/nvcf/exec/status/:requestId', invoker, opts.limit, opts.waits, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const pollSeconds = parsePollSeconds(c.req.header('nvcf-poll-seconds'), EXEC_DEFAULT_POLL_SECONDS);
    const principal = c.get('principal');
    const outcome = await service.status(requestId, pollSeconds, {
      signal: c.req.raw.signal,
      authorize: (request) => requireRequestAccess(principal, request),
    });
    deliverWhenWritten(c, outcome, service.delivered);
    return execEnvelopeResponse(outcome, c.req.path, (id) => opts.resultUrl(id, new URL(c.req.url).origin));
  });
  return app;
}
