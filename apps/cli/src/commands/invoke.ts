import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { InvokeOptions, NvcfClient } from '@nvcf/client';
import type { Command } from 'commander';
import { writeAnswer } from '../answer.ts';
import { collect, commaList, integer, readStdin } from '../args.ts';
import { contextFor } from '../context.ts';
import { InterruptedError, UsageError } from '../errors.ts';
import { createProgress } from '../progress.ts';
import { type InputSpec, kserveJson, parseDatatypes, parseShapes, readInput } from '../tensors.ts';

/** On a terminal, polls this often (unless --poll-seconds), so the progress line stays current. */
export const TERMINAL_POLL_SECONDS = 2;

interface InvokeFlags {
  version?: string;
  data?: string;
  contentType: string;
  input?: string[];
  datatype?: string[];
  shape?: string[];
  asset?: string[];
  stream?: boolean;
  pollSeconds?: number;
  out?: string;
}

const encoder = new TextEncoder();

/** `--data`: inline text, `@FILE`, or `@-` (stdin); checked to be JSON when that is its content type. */
async function readData(data: string, contentType: string): Promise<Uint8Array> {
  const from = data.startsWith('@') ? data.slice(1) : undefined;
  const bytes =
    from === undefined
      ? encoder.encode(data)
      : from === '-'
        ? encoder.encode(await readStdin())
        : new Uint8Array(await readFile(from));
  if (/json/i.test(contentType)) {
    try {
      JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      const what = from === undefined ? '--data' : from === '-' ? 'stdin' : from;
      throw new UsageError(`${what} is not JSON (${(err as Error).message}); give --content-type for other bodies`);
    }
  }
  return bytes;
}

/** The text an OpenAI-style chunk adds (chat `delta.content` or completion `text`); undefined for other events. */
export function textDelta(data: string): string | undefined {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return undefined;
  }
  const choice = (event as { choices?: { delta?: { content?: unknown }; text?: unknown }[] } | null)?.choices?.[0];
  if (!choice) return undefined;
  if (choice.delta) return typeof choice.delta.content === 'string' ? choice.delta.content : '';
  return typeof choice.text === 'string' ? choice.text : undefined;
}

/** The model's declared inputs, for a JSON `--input` given without `--datatype`. */
function modelInputs(client: NvcfClient, functionId: string, versionId: string | undefined) {
  return async (): Promise<Map<string, InputSpec>> => {
    const versions = versionId
      ? [await client.functions.getVersion(functionId, versionId)]
      : await client.functions.listVersions(functionId);
    return new Map(versions.flatMap((v) => v.model?.inputs ?? []).map((i) => [i.name, i]));
  };
}

async function stream(
  client: NvcfClient,
  functionId: string,
  body: Uint8Array,
  opts: InvokeOptions,
  flags: InvokeFlags,
  json: boolean,
) {
  const file = flags.out ? createWriteStream(flags.out) : undefined;
  const sink = file ?? process.stdout;
  let text = false;
  for await (const event of client.stream(functionId, body, opts)) {
    if (json) {
      sink.write(`${JSON.stringify(event)}\n`);
      continue;
    }
    if (event.data === '[DONE]') continue;
    const delta = textDelta(event.data);
    if (delta === undefined) sink.write(`${event.data}\n`);
    else {
      sink.write(delta);
      text = true;
    }
  }
  if (text) sink.write('\n');
  if (file)
    await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

export function registerInvoke(program: Command): void {
  program
    .command('invoke')
    .description('invoke a function and print its answer (waits for it, polling as NVCF says)')
    .argument('<functionId>')
    .option('--version <versionId>', 'a version (default: a deployed one)')
    .option('--data <body>', 'the request body: JSON text, @FILE or @- (stdin)')
    .option('--content-type <type>', 'of --data', 'application/json')
    .option(
      '--input <NAME=@FILE.npy|NAME=JSON>',
      'a KServe V2 input tensor (repeatable): a .npy file or a JSON array',
      collect,
    )
    .option('--datatype <NAME=TYPE>', "a JSON input's datatype (default: the model's)", collect)
    .option('--shape <NAME=d1,d2>', "an input's shape (default: the array's)", collect)
    .option('--asset <assetId>', 'an asset the function reads (repeatable, or a,b)', commaList)
    .option('--stream', 'print server-sent events as they arrive (text deltas of an OpenAI-style stream)')
    .option(
      '--poll-seconds <n>',
      `each long poll's window (default 60, on a terminal ${TERMINAL_POLL_SECONDS})`,
      integer(1, 3600),
    )
    .option('--out <file>', 'write the answer to a file instead of stdout')
    .action(async (functionId: string, flags: InvokeFlags, cmd: Command) => {
      const inputSpecs = flags.input ?? [];
      if (flags.data === undefined && inputSpecs.length === 0) throw new UsageError('give --data or --input');
      if (flags.data !== undefined && inputSpecs.length > 0) throw new UsageError('give --data or --input, not both');
      if (flags.stream && inputSpecs.length > 0) throw new UsageError('--stream takes a --data body');
      const datatypes = parseDatatypes(flags.datatype ?? []);
      const shapes = parseShapes(flags.shape ?? []);
      const ctx = await contextFor(cmd);
      const { client } = ctx;

      const controller = new AbortController();
      const live = process.stderr.isTTY === true && !flags.stream;
      const progress = createProgress({ stream: process.stderr, enabled: live, client, signal: controller.signal });
      const onInterrupt = () => controller.abort(new InterruptedError(progress.requestId));
      process.once('SIGINT', onInterrupt);
      const pollSeconds = flags.pollSeconds ?? (live ? TERMINAL_POLL_SECONDS : undefined);
      const opts: InvokeOptions = {
        signal: controller.signal,
        onProgress: (p) => progress.onProgress(p),
        ...(flags.version ? { versionId: flags.version } : {}),
        ...(pollSeconds ? { pollSeconds } : {}),
        ...(flags.asset?.length ? { assetIds: flags.asset } : {}),
      };
      const target = { out: flags.out, json: ctx.json, stdout: process.stdout, stderr: process.stderr };
      try {
        if (inputSpecs.length > 0) {
          const inputOptions = { datatypes, shapes, modelInputs: modelInputs(client, functionId, flags.version) };
          const inputs = await Promise.all(inputSpecs.map((spec) => readInput(spec, inputOptions)));
          const result = await client.infer(functionId, inputs, { ...opts, binary: true });
          progress.stop();
          const body = encoder.encode(`${kserveJson(result)}\n`);
          await writeAnswer(
            { requestId: result.requestId, status: 200, contentType: 'application/json', body },
            target,
          );
          return;
        }
        const body = await readData(flags.data ?? '', flags.contentType);
        if (flags.stream) {
          await stream(client, functionId, body, { ...opts, contentType: flags.contentType }, flags, ctx.json);
          return;
        }
        const answer = await client.invoke(functionId, body, { ...opts, contentType: flags.contentType });
        progress.stop();
        await writeAnswer(answer, target);
      } catch (err) {
        if (controller.signal.aborted) throw new InterruptedError(progress.requestId);
        throw err;
      } finally {
        progress.stop();
        process.off('SIGINT', onInterrupt);
      }
    });
}
