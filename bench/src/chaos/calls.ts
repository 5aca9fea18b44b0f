import { randomUUID } from 'node:crypto';
import { createKeys } from '@nvcf/queue';
import { modelFunctionId } from '@nvcf/worker';
import { Redis } from 'ioredis';

/** What happened to the calls of one scenario. */
export interface CallTally {
  calls: number;
  completed: number;
  /** Never answered with a result before the scenario's deadline. */
  lost: number;
  /** Answered with a result other than the function's (a mix-up between requests). */
  wrong: number;
  /** Requests the function ran to completion more than once (the request record's `runs`). */
  ranTwice: number;
  /** Answers with a 5xx other than 503 (a 503 with Retry-After is the documented outage answer). */
  serverErrors: number;
  /** 503 answers (Redis away), each with Retry-After. */
  unavailable: number;
  /** 503 answers without Retry-After. */
  unavailableWithoutRetryAfter: number;
  /** The longest any single HTTP answer took beyond its own window (ms). */
  worstOverrunMs: number;
}

export const emptyTally = (): CallTally => ({
  calls: 0,
  completed: 0,
  lost: 0,
  wrong: 0,
  ranTwice: 0,
  serverErrors: 0,
  unavailable: 0,
  unavailableWithoutRetryAfter: 0,
  worstOverrunMs: 0,
});

const SIMPLE = modelFunctionId('simple');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A `simple` request unique to `n`, and the OUTPUT0 it must produce. */
function simpleCall(n: number, rows = 1): { body: string; expected: number[] } {
  const a = Array.from({ length: 16 * rows }, (_, i) => (n * 7 + i) % 100_000);
  const b = Array.from({ length: 16 * rows }, (_, i) => (n + i) % 1000);
  const body = JSON.stringify({
    id: String(n),
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data: b },
    ],
  });
  return { body, expected: a.map((x, i) => x + (b[i] ?? 0)) };
}

export interface CallOptions {
  /** Gateways to use, round robin; a failed connection moves on to the next. */
  gateways: () => string[];
  adminKey: string;
  /** NVCF-POLL-SECONDS of every HTTP call. */
  pollSeconds: number;
  /** When a call counts as lost. */
  deadline: number;
  /** Extra bytes in each request (the soak's large inputs): an ignored request parameter. */
  padBytes?: number;
}

/**
 * One logical call as a careful client makes it: pexec with an `Idempotency-Key` (so a retry after a
 * dropped connection or a 503 never runs the function twice), then status polls, on any gateway, until
 * the result or the deadline. Returns the request id it ended with.
 */
export async function oneCall(n: number, opts: CallOptions, tally: CallTally): Promise<string | undefined> {
  tally.calls++;
  const { body: plain, expected } = simpleCall(n);
  const body = opts.padBytes
    ? JSON.stringify({ ...JSON.parse(plain), parameters: { pad: 'x'.repeat(opts.padBytes) } })
    : plain;
  const key = randomUUID();
  let requestId: string | undefined;
  let turn = n;
  const trace: string[] = [];
  while (Date.now() < opts.deadline) {
    const all = opts.gateways();
    const url = all[turn++ % all.length];
    const t0 = Date.now();
    let res: Response;
    try {
      res = requestId
        ? await fetch(`${url}/v2/nvcf/pexec/status/${requestId}`, {
            headers: { authorization: `Bearer ${opts.adminKey}`, 'nvcf-poll-seconds': String(opts.pollSeconds) },
          })
        : await fetch(`${url}/v2/nvcf/pexec/functions/${SIMPLE}`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${opts.adminKey}`,
              'content-type': 'application/json',
              'idempotency-key': key,
              'nvcf-poll-seconds': String(opts.pollSeconds),
            },
            body,
          });
    } catch {
      await sleep(100); // connection refused or reset: that gateway is away; try the next
      continue;
    }
    tally.worstOverrunMs = Math.max(tally.worstOverrunMs, Date.now() - t0 - opts.pollSeconds * 1000);
    requestId = res.headers.get('nvcf-reqid') ?? requestId;
    trace.push(`${requestId ? 'S' : 'P'}${res.status}:${res.headers.get('nvcf-reqid')?.slice(0, 8) ?? '-'}`);
    if (res.status === 200) {
      const answer = (await res.json()) as { outputs: { name: string; data: number[] }[] };
      const got = answer.outputs.find((o) => o.name === 'OUTPUT0')?.data ?? [];
      if (got.length !== expected.length || got.some((v, i) => v !== expected[i])) tally.wrong++;
      tally.completed++;
      return requestId;
    }
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 202) continue;
    if (res.status === 503) {
      tally.unavailable++;
      if (!res.headers.get('retry-after')) tally.unavailableWithoutRetryAfter++;
      await sleep(200);
      continue;
    }
    if (res.status >= 500) tally.serverErrors++;
    // A 404 for a request this client started: its result went to nobody this client saw. Lost.
    if (res.status === 404 && requestId) break;
    await sleep(200);
  }
  tally.lost++;
  if (process.env.CHAOS_TRACE) process.stderr.write(`lost call ${n}: ${trace.join(' ')}\n`);
  return requestId;
}

/** Runs calls 0..count-1 with `concurrency` in flight; `onProgress` sees the number of finished calls. */
export async function runCalls(
  count: number,
  concurrency: number,
  opts: CallOptions,
  tally: CallTally,
  onProgress?: (done: number) => Promise<void> | void,
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  let done = 0;
  const lane = async () => {
    for (;;) {
      const n = next++;
      if (n >= count) return;
      const id = await oneCall(n, opts, tally);
      if (id) ids.push(id);
      done++;
      await onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return ids;
}

/** How many of the requests the function completed more than once (runs > 1 in their records). */
export async function countRanTwice(redisUrl: string, keyPrefix: string, ids: string[]): Promise<number> {
  const redis = new Redis(redisUrl);
  const keys = createKeys(keyPrefix);
  try {
    let twice = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const runs = await Promise.all(batch.map((id) => redis.hget(keys.request(id), 'runs')));
      twice += runs.filter((r) => Number(r ?? 0) > 1).length;
    }
    return twice;
  } finally {
    redis.disconnect();
  }
}
