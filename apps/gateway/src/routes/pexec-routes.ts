import { readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono } from 'hono';
import { invocationResponse } from '../http/invocation-response.ts';
import { forwardedHeaders } from '../invocation/forwarded-headers.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import { parsePollSeconds } from '../invocation/poll-seconds.ts';
import { parseInvocationBody } from '../invocation/request-body.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

export interface PexecRouteOptions {
  maxBodyBytes: number;
  defaultPollSeconds: number;
}

/** `POST /v2/nvcf/pexec/functions/{fid}[/versions/{vid}]` and `GET /v2/nvcf/pexec/status/{reqId}`. */
export function pexecRoutes(service: InvocationService, opts: PexecRouteOptions): Hono {
  const app = new Hono();

  const invoke = async (c: Context) => {
    const pollSeconds = parsePollSeconds(c.req.header('nvcf-poll-seconds'), opts.defaultPollSeconds);
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    const rawVersion = c.req.param('versionId');
    const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
    const input = parseInvocationBody(
      await readRequestBody(c.req.raw, opts.maxBodyBytes),
      c.req.header('content-type'),
      {
        binaryExtension: c.req.header('inference-header-content-length') !== undefined,
      },
    );
    const outcome = await service.invoke({
      functionId,
      versionId,
      input,
      headers: forwardedHeaders(c.req.raw.headers),
      pollSeconds,
      signal: c.req.raw.signal,
    });
    return invocationResponse(outcome, c.req.path);
  };

  app.post('/v2/nvcf/pexec/functions/:functionId', invoke);
  app.post('/v2/nvcf/pexec/functions/:functionId/versions/:versionId', invoke);

  app.get('/v2/nvcf/pexec/status/:requestId', async (c) => {
    const pollSeconds = parsePollSeconds(c.req.header('nvcf-poll-seconds'), opts.defaultPollSeconds);
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const outcome = await service.status(requestId, pollSeconds, c.req.raw.signal);
    return invocationResponse(outcome, c.req.path);
  });
  return app;
}
