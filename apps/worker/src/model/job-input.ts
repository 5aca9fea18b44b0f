import { type InvocationJob, inputKeptBeside, type RequestStore } from '@nvcf/queue';

/**
 * A job's input once at hand: parsed JSON, the body's bytes (base64 decoded, or a stored input read back),
 * or a KServe request in its two parts (the JSON part as data, the tensors' bytes read back). The queue
 * carries its own forms (job-contract.ts); the worker decodes them once, here.
 */
export type JobInput =
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'kserve'; header: unknown; binary: Buffer };

/** A job whose input is at hand. */
export type ModelJob = Omit<InvocationJob, 'input'> & { input: JobInput };

/**
 * The job with its input at hand: the bytes its entry carried (`entryBytes`), or those kept beside it read from the
 * request store. Undefined when a kept input is gone (only an expired request loses it: both share the TTL).
 */
export async function readModelJob(
  store: Pick<RequestStore, 'readInput'>,
  queued: InvocationJob,
  entryBytes: Buffer | undefined,
): Promise<ModelJob | undefined> {
  // A job needs no claim: its delivery is one (the queue's pending list shows a worker has it), and a request
  // settled meanwhile (cancelled) keeps its answer when this one is stored (the first writer wins). Only an input
  // kept beside the job costs a round trip, its read.
  const kept = inputKeptBeside(queued.input) ? store.readInput(queued.requestId) : Promise.resolve(undefined);
  // Observed here: a job whose input travels inside it never awaits `kept`, and a failed read must not become an
  // unhandled rejection (which ends the process).
  kept.catch(() => undefined);
  return withInput(queued, kept, entryBytes);
}

async function withInput(
  job: InvocationJob,
  kept: Promise<Buffer | undefined>,
  entryBytes: Buffer | undefined,
): Promise<ModelJob | undefined> {
  const { input } = job;
  if (input.kind === 'json') return { ...job, input: { kind: 'json', value: input.value } };
  if (input.kind === 'bytes') return { ...job, input: { kind: 'bytes', bytes: Buffer.from(input.base64, 'base64') } };
  if (input.kind === 'entry' || (input.kind === 'kserve' && (input.inEntry || input.binaryBytes === 0))) {
    // The consumer checked that the entry carries the bytes (as many as a `kserve` input says).
    const bytes = entryBytes ?? Buffer.alloc(0);
    if (input.kind === 'entry') return { ...job, input: { kind: 'bytes', bytes } };
    return { ...job, input: { kind: 'kserve', header: input.header, binary: bytes } };
  }
  const raw = await kept;
  if (!raw) return undefined;
  // A copy of its own: ioredis hands out slices of its parser's buffers, and these bytes move to a model's thread.
  if (input.kind === 'kserve') {
    if (raw.byteLength !== input.binaryBytes) return undefined;
    return { ...job, input: { kind: 'kserve', header: input.header, binary: Buffer.from(raw) } };
  }
  if (input.format === 'bytes') return { ...job, input: { kind: 'bytes', bytes: Buffer.from(raw) } };
  return { ...job, input: { kind: 'json', value: JSON.parse(raw.toString('utf8')) } };
}
