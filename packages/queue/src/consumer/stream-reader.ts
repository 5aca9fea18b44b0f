import { WORKERS_GROUP } from '../keys.ts';
import { isNoGroup, isRedisUnavailable, type RedisClient } from '../redis-connection.ts';
import { entriesOf, type StreamEntry } from './job-entry.ts';
import type { RunJob } from './job-runner.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import { pause } from './pause.ts';

/**
 * The read loop of one consumer: blocking `XREADGROUP`s for as many jobs as it has room for, each run at once
 * (its lease held while it runs). It waits while full, and wakes when a job ends or `concurrency` is raised.
 */
export interface StreamReader {
  /** Jobs run at once; raising it takes effect at the next read. */
  concurrency: number;
  /** Resolves once the queue's consumer group exists and reads have begun (or reading stopped before). */
  readonly ready: Promise<void>;
  /** Resolves once the read loop has ended. */
  readonly stopped: Promise<void>;
  /** Stops reading; the jobs running go on. */
  stop(): void;
  /** Resolves once every job running now has ended. */
  settled(): Promise<unknown>;
}

export interface ReaderParts {
  /** Commands that must never time out: the reads block on a duplicate of it. */
  connection: RedisClient;
  stream: string;
  /** The consumer's name in the group. */
  consumer: string;
  leases: LeaseKeeper;
  run: RunJob;
  /** Pushes an own queue's expiry on before the first read; nothing for a shared queue. */
  refreshExpiry(): Promise<void>;
  /** The first maintenance pass, once reads begin. */
  maintain(): Promise<void>;
  fail(err: unknown): void;
}

export function createStreamReader(parts: ReaderParts, opts: { concurrency: number; blockMs: number }): StreamReader {
  const { connection, stream, consumer, leases, run, fail } = parts;
  const blocking = connection.duplicate();
  // Its failures reach the read that was waiting on it; without a listener ioredis would also print each one.
  blocking.on('error', () => {});
  let concurrency = opts.concurrency;
  let closing = false;
  const running = new Set<Promise<void>>();
  let wake: () => void = () => {};
  const woken = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });

  async function read(): Promise<void> {
    await ensureGroup();
    await parts.refreshExpiry();
    markReady();
    void parts.maintain();
    while (!closing) {
      if (leases.held >= concurrency) {
        await woken();
        continue;
      }
      let reply: unknown;
      try {
        reply = await readBatch(concurrency - leases.held);
      } catch (err) {
        if (closing) break;
        // The queue was retired (its version deleted; this consumer stops shortly), or Redis is away for a moment
        // (a failover; the connections log that themselves): read again shortly. Anything else is reported.
        leases.noteTrouble();
        if (!isNoGroup(err) && !isRedisUnavailable(err)) fail(err);
        await pause(500);
        if (!closing) await ensureGroup();
        continue;
      }
      for (const entry of entriesOf(reply)) start(entry);
    }
  }

  function readBatch(count: number): Promise<unknown> {
    // As bytes: an entry may carry an input's raw bytes (field b), which a string reply would mangle.
    return blocking.callBuffer('XREADGROUP', [
      'GROUP',
      WORKERS_GROUP,
      consumer,
      'COUNT',
      count,
      'BLOCK',
      opts.blockMs,
      'STREAMS',
      stream,
      '>',
    ]);
  }

  async function ensureGroup(): Promise<void> {
    try {
      // From the stream's start: jobs queued before any worker read them are delivered too.
      await connection.xgroup('CREATE', stream, WORKERS_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('BUSYGROUP'))) fail(err);
    }
  }

  function start(entry: StreamEntry) {
    leases.hold(entry.entryId);
    const job = run(entry)
      .catch(fail)
      .finally(() => {
        leases.release(entry.entryId);
        running.delete(job);
        wake();
      });
    running.add(job);
  }

  const stopped = read();

  return {
    get concurrency() {
      return concurrency;
    },
    set concurrency(n: number) {
      concurrency = n;
      wake();
    },
    ready,
    stopped,
    stop() {
      if (closing) return;
      closing = true;
      wake();
      // A read in flight is dropped with its connection: a job it was being handed stays on this consumer's
      // pending list and is recovered as stalled after a lease.
      blocking.disconnect();
      markReady();
    },
    settled: () => Promise.all(running),
  };
}
