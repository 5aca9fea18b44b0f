import type { QueueDetails } from '@nvcf/client';
import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import type { Column } from '../output.ts';

type VersionQueue = QueueDetails['queues'][number];

const queueColumns: readonly Column<VersionQueue>[] = [
  { header: 'NAME', value: (q) => q.functionName },
  { header: 'VERSION ID', value: (q) => q.functionVersionId },
  { header: 'STATUS', value: (q) => q.functionStatus },
  { header: 'QUEUE DEPTH', value: (q) => q.queueDepth },
];

export function registerQueue(program: Command): void {
  const queue = program
    .command('queue')
    .description("a function's queue depth per version, or (queue position <requestId>) where a request waits")
    .argument('<functionId>')
    .option('--version <versionId>', 'only this version')
    .action(async (functionId: string, opts: { version?: string }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const details = await client.queues.depth(functionId, opts.version);
      out.list(details.queues, queueColumns, details);
    });

  queue
    .command('position')
    .description('requests ahead of a queued request (0 once a worker has it; 404 once it is done)')
    .argument('<requestId>')
    .action(async (requestId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const position = await client.queues.position(requestId);
      out.record({ requestId, ...position }, position);
    });
}
