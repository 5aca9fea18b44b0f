import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { JobEvent, JobListener } from './consumer/job-events.ts';
import { createJobRunner } from './consumer/job-runner.ts';
import { createJobSlots } from './consumer/job-slots.ts';
import { createLeaseKeeper } from './consumer/lease-keeper.ts';
import { createOwnQueue } from './consumer/own-queue.ts';
import { createQueueMaintenance } from './consumer/queue-maintenance.ts';
import { createStreamReader } from './consumer/stream-reader.ts';
import type { InvocationResult } from './invocation-result.ts';
import type { InvocationJob } from './job-contract.ts';
import type { Keys } from './keys.ts';
import { withRequestScripts } from './lua-scripts.ts';
import type { RedisClient } from './redis-connection.ts';
import type { RequestStore } from './request-store.ts';

export type { JobEvent, JobListener } from './consumer/job-events.ts';
export { WORKER_QUEUE_TTL_MS } from './consumer/own-queue.ts';

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
  /** Each try of each job this consumer runs: started, then finished or threw (consumer/job-events.ts). */
  on(event: 'job', listener: JobListener): this;
}

export interface ConsumerDeps {
  /** Commands that must never time out (blocking reads use a duplicate of it). */
  connection: RedisClient;
  keys: Keys;
  store: RequestStore;
}

/**
 * A worker's consumer of one function version's queue: a Redis stream read through the `workers` consumer group
 * (https://redis.io/docs/latest/develop/data-types/streams/#consumer-groups). A delivered job stays on the group's
 * pending list, its idle time being its lease: this consumer renews it (`XCLAIM … JUSTID`) every half lease while
 * the job runs, and every consumer now and then puts jobs idle longer than a lease back into the stream
 * (maintain-queue.lua). A job leaves the queue in the script that stores its answer. The payload is parsed at this
 * edge; one that does not parse can never succeed, so it is answered as failed at once.
 *
 * Its parts (consumer/), in the order a job meets them: the stream reader (the read loop), the job slots (each job
 * started as it is read, `concurrency` at most), the job runner (the processor, then the answer or a retry), the
 * lease keeper (renewal while the job runs), the queue maintenance (stalled jobs, due retries); and for a worker's
 * own queue, its expiry, drain and deletion.
 */
export function createInvocationConsumer(
  deps: ConsumerDeps,
  versionId: string,
  processor: InvocationProcessor,
  opts: ConsumerOptions,
): InvocationConsumer {
  const { connection, keys, store } = deps;
  const scripts = withRequestScripts(connection);
  const queue = keys.queue(versionId, opts.ownQueue ? opts.workerId : undefined);
  const consumerName = `${opts.workerId}:${randomUUID().slice(0, 8)}`;
  const emitter = new EventEmitter();
  const fail = (err: unknown) => {
    if (emitter.listenerCount('error') > 0) emitter.emit('error', err instanceof Error ? err : new Error(String(err)));
  };

  const leases = createLeaseKeeper({ connection, stream: queue.stream, consumer: consumerName, fail }, opts);
  const ownQueue = opts.ownQueue ? createOwnQueue({ connection, queue, leases, fail }, opts) : undefined;
  const refreshExpiry = ownQueue ? ownQueue.refreshExpiry : async () => {};
  const queueParts = { scripts, keys, queue, versionId, store };
  const maintenance = createQueueMaintenance({ ...queueParts, leases, refreshExpiry, fail }, opts);
  // A listener that throws is reported as the consumer's error: it must never fail or retry the job it observes.
  const report = (event: JobEvent) => {
    try {
      emitter.emit('job', event);
    } catch (err) {
      fail(err);
    }
  };
  const run = createJobRunner({ ...queueParts, processor, retry: maintenance.retry, report }, opts);
  const slots = createJobSlots({ leases, run, fail }, opts.concurrency);
  const reader = createStreamReader(
    {
      connection,
      stream: queue.stream,
      consumer: consumerName,
      slots,
      leases,
      refreshExpiry,
      maintain: maintenance.maintain,
      fail,
    },
    { blockMs: opts.blockMs ?? 5000 },
  );

  const consumer: InvocationConsumer = {
    get concurrency() {
      return slots.concurrency;
    },
    set concurrency(n: number) {
      slots.concurrency = n;
    },
    waitUntilReady: () => reader.ready,
    async close(force = false) {
      if (force) ownQueue?.leaveToExpire();
      if (ownQueue && !ownQueue.leftToExpire) await ownQueue.drain();
      maintenance.stop();
      reader.stop();
      await reader.stopped;
      if (!force) await slots.settled();
      leases.stop();
      if (ownQueue && !ownQueue.leftToExpire) await ownQueue.removeIfEmpty();
    },
    on(event, listener) {
      emitter.on(event, listener);
      return consumer;
    },
  };
  return consumer;
}
