import { InvocationJob } from '../job-contract.ts';

/**
 * One entry of a queue's stream, as a consumer reads it: its id, its fields as text, and the input bytes of field b
 * (`EnqueueOptions.entryBytes`), which no other field may be read as.
 */
export interface StreamEntry {
  entryId: string;
  fields: Map<string, string>;
  bytes: Buffer | undefined;
}

export type ParsedJob = { success: true; data: InvocationJob } | { success: false; error: string };

/** A stream entry id's time part (`<ms>-<seq>`, https://redis.io/docs/latest/develop/data-types/streams/#entry-ids). */
export function entryTime(entryId: string): number {
  return Number.parseInt(entryId, 10);
}

/** Which try an entry's run is (1 on the first; field a counts the tries made) and how many it may have (field m). */
export function attemptsOf(fields: Map<string, string>): { attempt: number; maxAttempts: number } {
  return { attempt: Number(fields.get('a') ?? 0) + 1, maxAttempts: Number(fields.get('m') ?? 1) };
}

/** The entry a failed try is queued again as (retry-job.lua), `attempt` tries having been made. */
export function retryEntry(requestId: string, fields: Map<string, string>, attempt: number): string {
  return JSON.stringify({
    id: requestId,
    f: fields.get('f'),
    j: fields.get('j'),
    m: fields.get('m') ?? '1',
    a: String(attempt),
    s: fields.get('s') ?? '0',
  });
}

/** An entry maintain-queue.lua gave up on (it stalled too often), as the script returns it (JSON): request and job. */
export function parseFailedEntry(entry: string, versionId: string): { requestId: string; job: ParsedJob } {
  const { id, f, j } = JSON.parse(entry) as { id: string; f?: string; j?: string };
  const job = parseJob(
    new Map([
      ['id', id],
      ['f', f ?? ''],
      ['j', j ?? ''],
    ]),
    versionId,
  );
  return { requestId: id, job };
}

/**
 * A queue entry's job: its JSON with the ids the entry carries (request, function) and the queue's version.
 * `bytes`: the input bytes the entry carries (field b), which a job whose input is `inEntry` needs, as many as it says.
 */
export function parseJob(fields: Map<string, string>, versionId: string, bytes?: Buffer): ParsedJob {
  let value: unknown;
  try {
    value = JSON.parse(fields.get('j') ?? '');
  } catch (err) {
    return { success: false, error: err instanceof Error ? err.message : String(err) };
  }
  if (typeof value !== 'object' || value === null) return { success: false, error: 'the job is not an object' };
  const parsed = InvocationJob.safeParse({
    ...value,
    requestId: fields.get('id'),
    functionId: fields.get('f'),
    versionId,
  });
  if (!parsed.success) return { success: false, error: parsed.error.message };
  const { input } = parsed.data;
  if (input.kind === 'entry' && !bytes) {
    return { success: false, error: "the job's input is in its entry, which carries none" };
  }
  if (input.kind === 'kserve' && input.inEntry && bytes?.byteLength !== input.binaryBytes) {
    const carried = bytes ? `${bytes.byteLength} bytes` : 'none';
    return {
      success: false,
      error: `the job's input is ${input.binaryBytes} bytes in its entry, which carries ${carried}`,
    };
  }
  return parsed;
}

/**
 * The entries of an `XREADGROUP` reply for one stream, read as bytes: id, the fields as text, and the input
 * bytes of field b (a copy of their own: the reply's buffers are slices of the client's, and these may move to a
 * model's thread).
 */
export function entriesOf(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const out: StreamEntry[] = [];
  for (const stream of reply) {
    const entries: unknown = Array.isArray(stream) ? stream[1] : undefined;
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      if (!Array.isArray(entry) || !Buffer.isBuffer(entry[0]) || !Array.isArray(entry[1])) continue;
      const flat: unknown[] = entry[1];
      const fields = new Map<string, string>();
      let bytes: Buffer | undefined;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const name = String(flat[i]);
        const value = flat[i + 1];
        if (name === 'b' && Buffer.isBuffer(value)) bytes = Buffer.from(value);
        else fields.set(name, String(value));
      }
      out.push({ entryId: entry[0].toString(), fields, bytes });
    }
  }
  return out;
}
