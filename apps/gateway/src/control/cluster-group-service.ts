import { createHash } from 'node:crypto';
import type { FunctionRegistry, LiveWorker } from '@nvcf/control-store';

/** A pool as a cluster group: the GPUs its live workers report, each with its instance types (default first). */
export interface ClusterGroup {
  id: string;
  name: string;
  ncaId: string;
  authorizedNcaIds: string[];
  gpus: { name: string; instanceTypes: { name: string; description: string; default: boolean }[] }[];
  clusters: { id: string; name: string; k8sVersion?: string }[];
}

/** The worker pools that can run functions, as NVCF's cluster groups. */
export interface ClusterGroupService {
  /** One group per pool with a live worker, in the account the groups belong to (`NVCF_NCA_ID`). */
  list(): Promise<ClusterGroup[]>;
}

export function createClusterGroupService(
  workers: Pick<FunctionRegistry, 'liveMachines'>,
  ncaId: string,
): ClusterGroupService {
  return { list: async () => clusterGroupsOf(await workers.liveMachines(), ncaId) };
}

/** A pool's group id: a name-based UUID (RFC 9562 v5 layout) of its name, the same from every gateway. */
export function clusterGroupId(pool: string): string {
  const b = createHash('sha1').update(`nvcf-cluster-group:${pool}`).digest().subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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
