import { FUNCTION_STATUSES } from '@nvcf/protocol';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import { describeOperation, jsonResponse, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, REQUEST_ID, uuidString, VERSION_ID } from '../http/openapi-schemas.ts';
import type { QueueService } from '../invocation/queue-service.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** NVCF reports queue positions as an estimate capped at 1000 (NVCF behaviour: queues). */
const MAX_REPORTED_POSITION = 1000;

const QueueDto = z
  .object({
    functionVersionId: uuidString(),
    functionName: z.string(),
    functionStatus: z.enum(FUNCTION_STATUSES),
    queueDepth: z
      .number()
      .int()
      .min(0)
      .describe(
        'Requests in the version’s queue: waiting for a worker, or taken by one and not yet finished (0 only when ' +
          'the version has nothing to do: what an autoscaler scales on, so scaling to zero never cuts a run).',
      ),
  })
  .meta({ id: 'QueueDto' });
const GetQueuesResponse = z
  .object({ functionId: uuidString(), queues: z.array(QueueDto) })
  .meta({ id: 'GetQueuesResponse' });
const GetPositionInQueueResponse = z
  .object({
    functionId: uuidString(),
    functionVersionId: uuidString(),
    positionInQueue: z
      .number()
      .int()
      .min(0)
      .max(MAX_REPORTED_POSITION)
      .describe(`Requests ahead of it; 0 once a worker has it; capped at ${MAX_REPORTED_POSITION}.`),
  })
  .meta({ id: 'GetPositionInQueueResponse' });

const SCOPES = ['queue_details'] as const;
const depthSpec = (versioned: boolean): OperationSpec => ({
  tag: 'Queue Details',
  operationId: versioned ? 'getVersionQueueDetails' : 'getQueuesDetails',
  summary: versioned ? 'Queue depth of a function version' : 'Queue depths of a function’s versions',
  scopes: SCOPES,
  parameters: versioned ? [FUNCTION_ID, VERSION_ID] : [FUNCTION_ID],
  responses: { 200: jsonResponse('The queue of each version.', GetQueuesResponse) },
  problems: {
    400: Reason.notUuid,
    403: Reason.functionNotAllowed,
    404: `${versioned ? 'Unknown function or version.' : 'Unknown function.'} ${Reason.notVisible}`,
  },
});

export interface QueueRouteDeps {
  queues: QueueService;
  auth: Authenticator;
}

/** `GET /v2/nvcf/queues/functions/{fid}[/versions/{vid}]` and `GET /v2/nvcf/queues/{reqId}/position`. */
export function queueRoutes(deps: QueueRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const reader = requireAuth(deps.auth, 'queue_details');

  const depths = async (ncaId: string, functionId: string, versionId?: string) => {
    const queues = await deps.queues.versionQueues(ncaId, functionId, versionId);
    return {
      functionId,
      queues: queues.map((q) => ({
        functionVersionId: q.versionId,
        functionName: q.name,
        functionStatus: q.status,
        queueDepth: q.depth,
      })),
    };
  };

  app.get('/v2/nvcf/queues/functions/:functionId', describeOperation(depthSpec(false)), reader, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    return c.json(await depths(c.get('principal').ncaId, functionId));
  });
  app.get(
    '/v2/nvcf/queues/functions/:functionId/versions/:versionId',
    describeOperation(depthSpec(true)),
    reader,
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      requireFunction(c.get('principal'), functionId);
      const versionId = uuidParam('versionId', c.req.param('versionId'));
      return c.json(await depths(c.get('principal').ncaId, functionId, versionId));
    },
  );
  const position = describeOperation({
    tag: 'Queue Details',
    operationId: 'getPositionInQueue',
    summary: 'A request’s position in its queue',
    scopes: SCOPES,
    parameters: [REQUEST_ID],
    responses: { 200: jsonResponse('Where the request stands.', GetPositionInQueueResponse) },
    problems: {
      400: Reason.notUuid,
      403: 'The caller’s own request, on a function another account shared with the caller’s and no longer authorizes.',
      404:
        'Unknown or expired request, or one no longer queued (answered); or somebody else’s, answered alike (an ' +
        'operator may read any).',
    },
  });
  app.get('/v2/nvcf/queues/:requestId/position', position, reader, async (c) => {
    const requestId = uuidParam('requestId', c.req.param('requestId'));
    const queued = await deps.queues.position(c.get('principal'), requestId);
    return c.json({
      functionId: queued.functionId,
      functionVersionId: queued.versionId,
      positionInQueue: Math.min(queued.position, MAX_REPORTED_POSITION),
    });
  });
  return app;
}
