import type { Command } from 'commander';
import { writeAnswer } from '../answer.ts';
import { integer } from '../args.ts';
import { contextFor } from '../context.ts';

interface StatusFlags {
  pollSeconds: number;
  out?: string;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      "one poll of a request's status: prints its answer (delivered once, as NVCF does) or that it is still pending",
    )
    .argument('<requestId>')
    .option('--poll-seconds <n>', 'how long the gateway may hold the poll for the answer', integer(1, 3600), 1)
    .option('--out <file>', 'write the answer to a file instead of stdout')
    .action(async (requestId: string, flags: StatusFlags, cmd: Command) => {
      const { client, out, json } = await contextFor(cmd);
      // The SDK's invoke polls until the answer; one poll is a plain call on its transport.
      const res = await client.transport.send('GET', `/v2/nvcf/pexec/status/${encodeURIComponent(requestId)}`, {
        headers: { 'nvcf-poll-seconds': String(flags.pollSeconds) },
      });
      const percent = Number(res.headers.get('nvcf-percent-complete') ?? 0);
      if (res.status === 202) {
        await res.body?.cancel();
        out.done(`pending: ${percent}% complete (request ${requestId})`, { requestId, status: 'pending', percent });
        return;
      }
      if (res.status === 302) {
        // A result over the gateway's direct limit: a zip holding <requestId>.response, behind a signed URL.
        await res.body?.cancel();
        const location = new URL(res.headers.get('location') ?? '', client.transport.baseUrl).toString();
        if (flags.out) {
          const zip = await client.transport.send('GET', location);
          const body = new Uint8Array(await zip.arrayBuffer());
          await writeAnswer(
            { requestId, status: 200, contentType: 'application/zip', body },
            {
              out: flags.out,
              json,
              stdout: process.stdout,
              stderr: process.stderr,
            },
          );
          return;
        }
        out.done(`fulfilled: a large result, a zip at ${location} (fetch it with --out FILE)`, {
          requestId,
          status: 'fulfilled',
          location,
        });
        return;
      }
      const body = new Uint8Array(await res.arrayBuffer());
      const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
      await writeAnswer(
        { requestId, status: res.status, contentType, body },
        { out: flags.out, json, stdout: process.stdout, stderr: process.stderr },
      );
    });
}
