import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ClusterGroupService } from '../control/cluster-group-service.ts';
import { describeOperation, jsonResponse } from '../http/openapi-operation.ts';
import { uuidString } from '../http/openapi-schemas.ts';

const InstanceType = z
  .object({ name: z.string(), description: z.string(), default: z.boolean() })
  .meta({ id: 'InstanceType' });
const Gpu = z.object({ name: z.string(), instanceTypes: z.array(InstanceType) }).meta({ id: 'Gpu' });
const Cluster = z
  .object({ id: z.string(), name: z.string(), k8sVersion: z.string().optional() })
  .meta({ id: 'Cluster' });
const ClusterGroup = z
  .object({
    id: uuidString(),
    name: z.string().describe('The worker pool (`WORKER_POOL`).'),
    ncaId: z.string(),
    authorizedNcaIds: z.array(z.string()),
    gpus: z.array(Gpu).describe('What the pool’s live workers report (`WORKER_GPU`, `WORKER_INSTANCE_TYPE`).'),
    clusters: z.array(Cluster),
  })
  .meta({ id: 'ClusterGroup' });
const ClusterGroupsResponse = z.object({ clusterGroups: z.array(ClusterGroup) }).meta({ id: 'ClusterGroupsResponse' });

export interface ClusterGroupRouteDeps {
  clusterGroups: ClusterGroupService;
  auth: Authenticator;
}

/** `GET /v2/nvcf/clusterGroups`. */
export function clusterGroupRoutes(deps: ClusterGroupRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const spec = describeOperation({
    tag: 'Cluster Groups and GPUs',
    operationId: 'getClusterGroups',
    summary: 'List cluster groups',
    description:
      'The worker pools that can run functions, from the live workers’ heartbeats: one group per pool, with the ' +
      'GPUs (or `CPU`) and instance types its workers report.',
    scopes: ['list_cluster_groups'],
    responses: { 200: jsonResponse('One group per worker pool with a live worker.', ClusterGroupsResponse) },
  });
  app.get('/v2/nvcf/clusterGroups', spec, requireAuth(deps.auth, 'list_cluster_groups'), async (c) =>
    // The service's groups are what the document describes.
    c.json({ clusterGroups: await deps.clusterGroups.list() } satisfies z.infer<typeof ClusterGroupsResponse>),
  );
  return app;
}
