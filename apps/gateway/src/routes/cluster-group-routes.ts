import { createHash } from 'node:crypto';
import type { FunctionRegistry, LiveWorker } from '@nvcf/control-store';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { describeOperation, jsonResponse } from '../http/openapi-operation.ts';
import { uuidString } from '../http/openapi-schemas.ts';

/** A pool's group id: a name-based UUID (RFC 9562 v5 layout) of its name, the same from every gateway. */
export function clusterGroupId(pool: string): string {
  const b = createHash('sha1').update(`nvcf-cluster-group:${pool}`).digest().subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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
type ClusterGroup = z.infer<typeof ClusterGroup>;

/**
 * NVCF's cluster groups (NVCF API reference: "List Cluster Groups") built from live workers: one group per pool,
 * its GPUs and their instance types as the workers report them, sorted so every gateway answers alike. A GPU's
 * first instance type is its default. A pool whose workers all stopped is gone.
 */
export function clusterGroupsOf(workers: readonly LiveWorker[], ncaId: string): ClusterGroup[] {
  const pools = new Map<string, Map<string, Set<string>>>();
  for (const w of workers) {
    const gpus = pools.get(w.pool) ?? new Map<string, Set<string>>();
    pools.set(w.pool, gpus);
    const types = gpus.get(w.gpu) ?? new Set<string>();
    gpus.set(w.gpu, types);
    types.add(w.instanceType);
  }
  return [...pools.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pool, gpus]) => ({
      id: clusterGroupId(pool),
      name: pool,
      ncaId,
      authorizedNcaIds: [ncaId],
      gpus: [...gpus.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, types]) => ({
          name,
          instanceTypes: [...types].sort().map((type, i) => ({
            name: type,
            description: `${name} worker (${type})`,
            default: i === 0,
          })),
        })),
      // No Kubernetes cluster behind a pool that this gateway knows of: the pool is the unit.
      clusters: [],
    }));
}

export interface ClusterGroupRouteDeps {
  registry: FunctionRegistry;
  auth: Authenticator;
  /** The account the groups belong to (`NVCF_NCA_ID`). */
  ncaId: string;
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
    c.json({ clusterGroups: clusterGroupsOf(await deps.registry.liveMachines(), deps.ncaId) }),
  );
  return app;
}
