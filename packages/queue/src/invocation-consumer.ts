import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { InvocationJob, inputKeptBeside } from './job-contract.ts';
import { type Keys, WORKERS_GROUP } from './keys.ts';
import { withRequestScripts } from './lua-scripts.ts';
import { isNoGroup, isRedisUnavailable, type RedisClient } from './redis-connection.ts';
import type { FinishedJob, InvocationResult, RequestStore } from './request-store.ts';

export interface ConsumerOptions {
  /** Jobs run at once. May be changed later (`InvocationConsumer.concurrency`). */
  concurrency: number;
  /** This worker: it names the consumer (with a suffix of its own) and, with `ownQueue`, the queue read. */
  workerId: string;
  /** Read the worker's own queue of the version (the sequences it owns) instead of the version's shared one. */
  ownQueue?: boolean;
  /** How long a job's lease lives without renewal: a worker that dies releases its jobs after this. */
  lockDurationMs: number;
  /** How often this worker looks for jobs whose lease ran out (stalled) and puts them back. */
  stalledIntervalMs: number;
  /** Times a job may stall before it is failed; crashes mid-job are survived up to this many times. */
  maxStalledCount: number;
  /** The answer for a job that cannot be run: malformed, stalled too often, or failing on its last attempt. */
  failure(requestId: string, reason: string): InvocationResult;
  /** How long one blocking read waits for a job before it is sent again (ms). */
  blockMs?: number;
  /**
   * Own queue only: how long its keys outlive this consumer's latest refresh (each maintenance pass), so a worker
   * that dies leaves none behind (default `WORKER_QUEUE_TTL_MS`, at least 3 maintenance passes).
   */
  ownQueueTtlMs?: number;
  /**
   * Own queue only: how long `close()` keeps reading once the queue is empty, for a request a gateway routed here
   * just before this worker left the live list (default 1 s).
   */
  ownQueueQuietMs?: number;
}

/**
 * How long a worker's own queue (the requests of the sequences it owns) outlives the worker's latest refresh: a
 * worker that dies without a clean shutdown leaves its keys behind this long at most.
 */
export const WORKER_QUEUE_TTL_MS = 10 * 60_000;

export interface JobContext {
  /** 1 on the first try. */
  attempt: number;
  maxAttempts: number;
  /** When this try's entry joined the stream (ms since the epoch, from its id): the job's queue wait starts here. */
  queuedAt: number;
  /** The input's bytes the entry carried beside the job (`EnqueueOptions.entryBytes`), a copy of their own. */
  entryBytes?: Buffer;
}

/**
 * Runs one job. Resolves to the request's answer, stored as the job leaves the queue; undefined when there is
 * nothing to store (the request was settled already). A rejection is retried (after 200 ms, 400 ms…) while
 * attempts remain; the processor answers a failure on the last attempt itself.
 */
export type InvocationProcessor = (job: InvocationJob, ctx: JobContext) => Promise<InvocationResult | undefined>;

export interface InvocationConsumer {
  /** Jobs run at once; raising it takes effect at the next read. */
  concurrency: number;
  /** Resolves once the queue's consumer group exists and reads have begun. */
  waitUntilReady(): Promise<void>;
  /**
   * Stops reading; running jobs finish unless `force` (then they are recovered as stalled elsewhere). An own queue
   * is drained first (every request waiting in it is run: nothing else would) and then deleted, unless `force`.
   */
  close(force?: boolean): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): this;
}

export interface ConsumerDeps {
  /** Commands that must never time out (blocking reads use a duplicate of it). */
  connection: RedisClient;
  keys: Keys;
  store: RequestStore;
}

/** A stream entry id's time part (`<ms>-<seq>`, https://redis.io/docs/latest/develop/data-types/streams/#entry-ids). */
function entryTime(entryId: string): number {
  return Number.parseInt(entryId, 10);
}

/** How long a consumer that read nothing and holds no job may stay in the group (dead workers' names go). */
const IDLE_CONSUMER_MS = 10 * 60_000;
/** A lease no job outlasts: the maintenance pass's idle bound while it must count nothing as stalled. */
const NEVER_STALLED_MS = 2 ** 31;
/**
 * Deletes a worker's own queue if it holds nothing. KEYS[1] the stream, KEYS[2] its delayed retries (sorted set),
 * KEYS[3] their jobs (hash). Returns 1 when deleted, 0 when a request is still there (it then expires with the
 * queue's TTL, WORKER_QUEUE_TTL_MS).
 */
const REMOVE_IF_EMPTY = `if redis.call('XLEN', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  return 1
end
return 0`;
/** Most jobs one maintenance pass recovers or promotes. */
const MAINTAIN_BATCH = 100;

/**
 * A worker's consumer of one function version's queue: a Redis stream read through the `workers` consumer group
 * (https://redis.io/docs/latest/develop/data-types/streams/#consumer-groups). A delivered job stays on the group's
 * pending list, its idle time being its lease: this consumer renews it (`XCLAIM … JUSTID`) every half lease while
 * the job runs, and every consumer now and then puts jobs idle longer than a lease back into the stream
 * (maintain-queue.lua). A job leaves the queue in the script that stores its answer. The payload is parsed at this
 * edge; one that does not parse can never succeed, so it is answered as failed at once.
 */
export function createInvocationConsumer(
  deps: ConsumerDeps,
  versionId: string,
  processor: InvocationProcessor,
  opts: ConsumerOptions,
): InvocationConsumer {
  const { connection, keys, store } = deps;
  const r = withRequestScripts(connection);
  const q = keys.queue(versionId, opts.ownQueue ? opts.workerId : undefined);
  const name = `${opts.workerId}:${randomUUID().slice(0, 8)}`;
  const blockMs = opts.blockMs ?? 5000;
  const blocking = connection.duplicate();
  // Its failures reach the read that was waiting on it; without a listener ioredis would also print each one.
  blocking.on('error', () => {});
  const emitter = new EventEmitter();
  const fail = (err: unknown) => {
    if (emitter.listenerCount('error') > 0) emitter.emit('error', err instanceof Error ? err : new Error(String(err)));
  };

  let concurrency = opts.concurrency;
  let closing = false;
  /** A forced close was asked for: an own queue's drain stops, and its keys are left to expire. */
  let forced = false;
  let draining: Promise<void> | undefined;
  const ownQueueTtlMs = Math.max(opts.ownQueueTtlMs ?? WORKER_QUEUE_TTL_MS, 3 * opts.stalledIntervalMs);
  /**
   * When a command to Redis last failed (an outage, or a stall past the command timeout). Jobs Redis delivered to
   * this consumer meanwhile may not have reached it yet, so it cannot renew their leases: until a lease has passed
   * since, its maintenance pass counts nothing as stalled (else it would run such a job a second time).
   */
  let troubleAt = Number.NEGATIVE_INFINITY;
  /** Entry ids of the jobs running here: the leases to renew. */
  const active = new Set<string>();
  const running = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let wake: () => void = () => {};
  const woken = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });

  const renewal = setInterval(() => void renew(), Math.max(100, Math.floor(opts.lockDurationMs / 2)));
  const maintenance = setInterval(() => void maintain(), opts.stalledIntervalMs);
  renewal.unref();
  maintenance.unref();

  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const reading = read();

  const consumer: InvocationConsumer = {
    get concurrency() {
      return concurrency;
    },
    set concurrency(n: number) {
      concurrency = n;
      wake();
    },
    waitUntilReady: () => ready,
    async close(force = false) {
      if (force) forced = true;
      if (opts.ownQueue && !forced) {
        draining ??= drain();
        await draining;
      }
      if (!closing) {
        closing = true;
        clearInterval(maintenance);
        for (const t of timers) clearTimeout(t);
        wake();
        // A read in flight is dropped with its connection: a job it was being handed stays on this consumer's
        // pending list and is recovered as stalled after a lease.
        blocking.disconnect();
        markReady();
      }
      await reading;
      if (!force) await Promise.all(running);
      clearInterval(renewal);
      if (opts.ownQueue && !forced) await removeIfEmpty();
    },
    on(event, listener) {
      emitter.on(event, listener);
      return consumer;
    },
  };
  return consumer;

  async function read(): Promise<void> {
    await ensureGroup();
    await refreshExpiry();
    markReady();
    void maintain();
    while (!closing) {
      if (active.size >= concurrency) {
        await woken();
        continue;
      }
      let reply: unknown;
      try {
        // As bytes: an entry may carry an input's raw bytes (field b), which a string reply would mangle.
        reply = await blocking.callBuffer('XREADGROUP', [
          'GROUP',
          WORKERS_GROUP,
          name,
          'COUNT',
          concurrency - active.size,
          'BLOCK',
          blockMs,
          'STREAMS',
          q.stream,
          '>',
        ]);
      } catch (err) {
        if (closing) break;
        // The queue was retired (its version deleted; this consumer stops shortly), or Redis is away for a moment
        // (a failover; the connections log that themselves): read again shortly. Anything else is reported.
        troubleAt = Date.now();
        if (!isNoGroup(err) && !isRedisUnavailable(err)) fail(err);
        await pause(500);
        if (!closing) await ensureGroup();
        continue;
      }
      for (const [entryId, fields, bytes] of entriesOf(reply)) start(entryId, fields, bytes);
    }
  }

  async function ensureGroup(): Promise<void> {
    try {
      // From the stream's start: jobs queued before any worker read them are delivered too.
      await connection.xgroup('CREATE', q.stream, WORKERS_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('BUSYGROUP'))) fail(err);
    }
  }

  function start(entryId: string, fields: Map<string, string>, bytes: Buffer | undefined) {
    const requestId = fields.get('id') ?? '';
    active.add(entryId);
    const job = run(entryId, requestId, fields, bytes)
      .catch(fail)
      .finally(() => {
        active.delete(entryId);
        running.delete(job);
        wake();
      });
    running.add(job);
  }

  async function run(
    entryId: string,
    requestId: string,
    fields: Map<string, string>,
    bytes: Buffer | undefined,
  ): Promise<void> {
    const attempt = Number(fields.get('a') ?? 0) + 1;
    const maxAttempts = Number(fields.get('m') ?? 1);
    const finished = (inputKept: boolean): FinishedJob => ({ queue: q, entryId, inputKept });
    const job = parseJob(fields, versionId, bytes);
    if (!job.success) {
      const answer = opts.failure(requestId, `malformed invocation job: ${job.error}`);
      await store.complete(requestId, answer, undefined, finished(true));
      return;
    }
    let result: InvocationResult | undefined;
    try {
      const ctx: JobContext = { attempt, maxAttempts, queuedAt: entryTime(entryId) };
      if (bytes) ctx.entryBytes = bytes;
      result = await processor(job.data, ctx);
    } catch (err) {
      if (attempt < maxAttempts) {
        await retry(entryId, requestId, fields, attempt);
        return;
      }
      result = opts.failure(requestId, err instanceof Error ? err.message : String(err));
    }
    const done = finished(inputKeptBeside(job.data.input));
    const answer = result;
    // The run is over: its answer must not be lost to a Redis that is away for a moment (a failover).
    await persistently(async () => {
      if (answer) await store.complete(requestId, answer, job.data.reply, done);
      else await leave(requestId, done);
    });
  }

  /**
   * Tries `op` again while Redis is unavailable, for up to about a lease: after that the job is recovered as stalled
   * and run again elsewhere anyway.
   */
  async function persistently<T>(op: () => Promise<T>): Promise<T> {
    const until = Date.now() + opts.lockDurationMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      try {
        return await op();
      } catch (err) {
        if (!isRedisUnavailable(err) || Date.now() + delay > until) throw err;
        await pause(delay);
      }
    }
  }

  /** Takes a job whose request was settled already off the queue (and releases the bytes it held there). */
  async function leave(requestId: string, job: FinishedJob): Promise<void> {
    if (job.inputKept) {
      await r.nvcfLeaveJobDroppingInput(q.stream, keys.requestInput(requestId), WORKERS_GROUP, job.entryId, requestId);
    } else await r.nvcfLeaveJob(q.stream, WORKERS_GROUP, job.entryId, requestId);
  }

  async function retry(entryId: string, requestId: string, fields: Map<string, string>, attempt: number) {
    const delayMs = 200 * 2 ** (attempt - 1);
    const entry = JSON.stringify({
      id: requestId,
      f: fields.get('f'),
      j: fields.get('j'),
      m: fields.get('m') ?? '1',
      a: String(attempt),
      s: fields.get('s') ?? '0',
    });
    await r.nvcfRetryJob(
      q.stream,
      q.delayed,
      q.delayedJobs,
      WORKERS_GROUP,
      entryId,
      requestId,
      entry,
      Date.now() + delayMs,
    );
    // The retry's keys may be new: they expire like the queue's.
    await refreshExpiry();
    // This worker puts it back when due; if it dies first, any worker's maintenance pass does.
    const timer = setTimeout(() => {
      timers.delete(timer);
      void maintain();
    }, delayMs + 5);
    timer.unref();
    timers.add(timer);
  }

  /**
   * An own queue lives while its worker does: each pass pushes its keys' expiry on (a worker's queue is named by
   * the worker, so a dead one's is never read or cleaned again otherwise).
   */
  async function refreshExpiry(): Promise<void> {
    if (!opts.ownQueue) return;
    try {
      await Promise.all([q.stream, q.delayed, q.delayedJobs].map((key) => connection.pexpire(key, ownQueueTtlMs)));
    } catch (err) {
      troubleAt = Date.now();
      if (!isRedisUnavailable(err)) fail(err);
    }
  }

  /**
   * Keeps reading until the own queue holds nothing (waiting, running or due for a retry) and has stayed empty for
   * `ownQueueQuietMs`. Its worker has left the live list by now (so gateways route its sequences elsewhere), but a
   * gateway that read the list just before may still be adding a request: this worker holds that sequence's state.
   */
  async function drain(): Promise<void> {
    const quietMs = opts.ownQueueQuietMs ?? 1000;
    let emptySince: number | undefined;
    while (!forced) {
      const held = await Promise.all([connection.xlen(q.stream), connection.zcard(q.delayed)]).then(
        ([inStream, delayed]) => inStream + delayed,
        () => 1,
      );
      if (held > 0) emptySince = undefined;
      else {
        emptySince ??= Date.now();
        if (Date.now() - emptySince >= quietMs) return;
      }
      await pause(50);
    }
  }

  /** Deletes a drained own queue (its consumer group with it), unless a request arrived since. */
  async function removeIfEmpty(): Promise<void> {
    await connection.eval(REMOVE_IF_EMPTY, 3, q.stream, q.delayed, q.delayedJobs).catch((err: unknown) => fail(err));
  }

  async function renew(): Promise<void> {
    if (active.size === 0) return;
    try {
      await connection.xclaim(q.stream, WORKERS_GROUP, name, 0, ...active, 'JUSTID');
    } catch (err) {
      troubleAt = Date.now();
      fail(err);
    }
  }

  async function maintain(): Promise<void> {
    if (closing) return;
    // This consumer's own leases first, on the same connection: after Redis was away (renewals could not reach
    // it), its running jobs would otherwise look stalled to its own pass and run twice.
    await renew();
    await refreshExpiry();
    try {
      const failed = await r.nvcfMaintainQueue(
        q.stream,
        q.delayed,
        q.delayedJobs,
        WORKERS_GROUP,
        Date.now() - troubleAt < opts.lockDurationMs ? NEVER_STALLED_MS : opts.lockDurationMs,
        opts.maxStalledCount,
        Date.now(),
        keys.requestKeyPrefix,
        MAINTAIN_BATCH,
        IDLE_CONSUMER_MS,
      );
      for (const entry of failed) {
        const { id, f, j } = JSON.parse(entry) as { id: string; f?: string; j?: string };
        const job = parseJob(
          new Map([
            ['id', id],
            ['f', f ?? ''],
            ['j', j ?? ''],
          ]),
          versionId,
        );
        const reason = `the job stalled more than ${opts.maxStalledCount} times (its worker stopped or hung)`;
        await store.complete(id, opts.failure(id, reason), job.success ? job.data.reply : undefined);
      }
    } catch (err) {
      troubleAt = Date.now();
      fail(err);
    }
  }
}

/**
 * A queue entry's job: its JSON with the ids the entry carries (request, function) and the queue's version.
 * `bytes`: the input bytes the entry carries (field b), which a job whose input is `inEntry` needs, as many as it says.
 */
function parseJob(
  fields: Map<string, string>,
  versionId: string,
  bytes?: Buffer,
): { success: true; data: InvocationJob } | { success: false; error: string } {
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
function entriesOf(reply: unknown): [string, Map<string, string>, Buffer | undefined][] {
  if (!Array.isArray(reply)) return [];
  const out: [string, Map<string, string>, Buffer | undefined][] = [];
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
      out.push([entry[0].toString(), fields, bytes]);
    }
  }
  return out;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
