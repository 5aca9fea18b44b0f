import type { RequestOptions } from './control-plane.ts';
import type { Transport } from './transport.ts';

/** An instance type of a GPU (NVCF API reference: InstanceType). */
export interface InstanceType {
  name: string;
  description: string;
  /** The GPU's default instance type. */
  default: boolean;
}

/**
 * A group of workers that can run functions (NVCF API reference: ClusterGroup): on a self-hosted gateway, one
 * worker pool with a live worker, and the GPUs (`CPU` for none) and instance types its workers report.
 */
export interface ClusterGroup {
  id: string;
  name: string;
  ncaId: string;
  authorizedNcaIds: string[];
  gpus: { name: string; instanceTypes: InstanceType[] }[];
  clusters: { id: string; name: string; k8sVersion?: string }[];
}

/**
 * Cluster groups (`GET /v2/nvcf/clusterGroups`, scope `list_cluster_groups`): where a deployment's `gpu` and
 * `instanceType` can come from.
 *
 * @example
 * const groups = await nvcf.clusterGroups.list();
 * console.log(groups.flatMap((g) => g.gpus.map((gpu) => `${g.name}: ${gpu.name}`)));
 */
export class ClusterGroupsApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  async list(opts: RequestOptions = {}): Promise<ClusterGroup[]> {
    const signal = opts.signal ? { signal: opts.signal } : {};
    const body = await this.#t.json<{ clusterGroups: ClusterGroup[] }>(
      'GET',
      '/v2/nvcf/clusterGroups',
      undefined,
      signal,
    );
    return body.clusterGroups;
  }
}
