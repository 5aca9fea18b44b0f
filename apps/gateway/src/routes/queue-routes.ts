import { AppError, functionStatus } from '@nvcf/protocol';
import type { FunctionRegistry, InvocationProducer, RequestStore } from '@nvcf/queue';
import { Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import { requireRequestAccess } from '../invocation/request-access.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** NVCF reports queue positions as an estimate capped at 1000 (NVCF behaviour: queues). */
const MAX_REPORTED_POSITION = 1000;

export interface QueueRouteDeps {
  registry: FunctionRegistry;
  producer: InvocationProducer;
  store: RequestStore;
  auth: Authenticator;
}

/** `GET /v2/nvcf/queues/functions/{fid}[/versions/{vid}]` and `GET /v2/nvcf/queues/{reqId}/position`. */
export function queueRoutes(deps: QueueRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const reader = requireAuth(deps.auth, 'queue_details');

  const depths = async (functionId: string, versionId?: string) => {
    const versions = (await deps.registry.versions(functionId)).filter((v) => !versionId || v.versionId === versionId);
    if (versions.length === 0) {
      throw new AppError(
        'NOT_FOUND',
        versionId ? `Function '${functionId}' version '${versionId}' not found` : `Function '${functionId}' not found`,
      );
    }
    const live = await deps.registry.liveWorkers(versions.map((v) => v.versionId));
    const queues = await Promise.all(
      versions.map(async (v, i) => ({
        functionVersionId: v.versionId,
        functionName: v.name,
        functionStatus: functionStatus(v.deployment, live[i]?.length ?? 0),
        queueDepth: await deps.producer.depth(v.versionId),
      })),
    );
    return { functionId, queues };
  };

  app.get('/v2/nvcf/queues/functions/:functionId', reader, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    return c.json(await depths(functionId));
  });
  app.get('/v2/nvcf/queues/functions/:functionId/versions/:versionId', reader, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    return c.json(await depths(functionId, uuidParam('versionId', c.req.param('versionId'))));
  });
  app.get('/v2/nvcf/queues/:requestId/position', reader, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const owner = await deps.store.owner(requestId);
    if (!owner) throw new AppError('NOT_FOUND', `Request '${requestId}' not found`);
    requireRequestAccess(c.get('principal'), { requestId, ...owner });
    const position = await deps.producer.position(owner.versionId, requestId);
    if (position === undefined) throw new AppError('NOT_FOUND', `Request '${requestId}' is no longer queued`);
    return c.json({
      functionId: owner.functionId,
      functionVersionId: owner.versionId,
      positionInQueue: Math.min(position, MAX_REPORTED_POSITION),
    });
  });
  return app;
}
