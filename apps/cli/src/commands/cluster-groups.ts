import type { ClusterGroup } from '@nvcf/client';
import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import type { Column } from '../output.ts';

/** One row per instance type: what a deployment's `gpu` and `instanceType` can name. */
interface Row {
  group: string;
  gpu: string;
  instanceType: string;
  default: boolean;
}

const columns: readonly Column<Row>[] = [
  { header: 'CLUSTER GROUP', value: (r) => r.group },
  { header: 'GPU', value: (r) => r.gpu },
  { header: 'INSTANCE TYPE', value: (r) => r.instanceType },
  { header: 'DEFAULT', value: (r) => (r.default ? 'yes' : '') },
];

const rowsOf = (groups: readonly ClusterGroup[]): Row[] =>
  groups.flatMap((g) =>
    g.gpus.flatMap((gpu) =>
      gpu.instanceTypes.map((t) => ({ group: g.name, gpu: gpu.name, instanceType: t.name, default: t.default })),
    ),
  );

export function registerClusterGroups(program: Command): void {
  program
    .command('cluster-groups')
    .description('the worker pools that can run functions, with the GPUs and instance types their workers report')
    .action(async (_opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const groups = await client.clusterGroups.list();
      out.list(rowsOf(groups), columns, { clusterGroups: groups });
    });
}
