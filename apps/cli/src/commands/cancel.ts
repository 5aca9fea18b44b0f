import type { Command } from 'commander';
import { contextFor } from '../context.ts';

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description(
      'cancel a request of yours that is queued or running: it leaves its queue, a decoupled model stops, and ' +
        'its status answers 499 from then on (exit 1 when it already had its answer, 409, or is unknown, 404)',
    )
    .argument('<requestId>')
    .action(async (requestId: string, _flags: unknown, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      await client.cancel(requestId);
      out.done(`cancelled request ${requestId}`, { requestId, status: 'cancelled' });
    });
}
