import { WORKERS_GROUP } from '../keys.ts';
import { isNoGroup, isRedisUnavailable, type RedisClient } from '../redis-connection.ts';
import { entriesOf } from './job-entry.ts';
import type { JobSlots } from './job-slots.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import { pause } from './pause.ts';

/**
 * The read loop of one consumer: blocking `XREADGROUP`s for as many jobs as it has free slots for, each started at
 * once. It waits while no slot is free, and reads again when one is.
 */
export interface StreamReader {
  /** Resolves once the queue's consumer group exists and reads have begun (or reading stopped before). */
  readonly ready: Promise<void>;
  /** Resolves once the read loop has ended. */
  readonly stopped: Promise<void>;
  /** Stops reading; the jobs running go on. */
  stop(): void;
}

export interface ReaderParts {
  /** Commands that must never time out: the reads block on a duplicate of it. */
  connection: RedisClient;
  stream: string;
  /** The consumer's name in the group. */
  consumer: string;
  slots: JobSlots;
  leases: Pick<LeaseKeeper, 'noteTrouble'>;
  /** Pushes an own queue's expiry on before the first read; nothing for a shared queue. */
  refreshExpiry(): Promise<void>;
  /** The first maintenance pass, once reads begin. */
  maintain(): Promise<void>;
  fail(err: unknown): void;
}

export function createStreamReader(parts: ReaderParts, opts: { blockMs: number }): StreamReader {
  const { connection, stream, consumer, slots, leases, fail } = parts;
  const blocking = connection.duplicate();
  // Its failures reach the read that was waiting on it; without a listener ioredis would also print each one.
  blocking.on('error', () => {});
  let closing = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const ensureGroup = () => createGroup(connection, stream, fail);

  async function read(): Promise<void> {
    await ensureGroup();
    await parts.refreshExpiry();
    markReady();
    void parts.maintain();
    while (!closing) {
      if (slots.free <= 0) {
        await slots.changed();
        continue;
      }
      let reply: unknown;
      try {
        reply = await readBatch(blocking, stream, consumer, slots.free, opts.blockMs);
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
      for (const entry of entriesOf(reply)) slots.start(entry);
    }
  }

  return {
    ready,
    stopped: read(),
    stop() {
      if (closing) return;
      closing = true;
      slots.wake();
      // A read in flight is dropped with its connection: a job it was being handed stays on this consumer's
      // pending list and is recovered as stalled after a lease.
      blocking.disconnect();
      markReady();
    },
  };
}

function readBatch(blocking: RedisClient, stream: string, consumer: string, count: number, blockMs: number) {
  // As bytes: an entry may carry an input's raw bytes (field b), which a string reply would mangle.
  return blocking.callBuffer('XREADGROUP', [
    'GROUP',
    WORKERS_GROUP,
    consumer,
    'COUNT',
    count,
    'BLOCK',
    blockMs,
    'STREAMS',
    stream,
    '>',
  ]);
}

async function createGroup(connection: RedisClient, stream: string, fail: (err: unknown) => void): Promise<void> {
  try {
    // From the stream's start: jobs queued before any worker read them are delivered too.
    await connection.xgroup('CREATE', stream, WORKERS_GROUP, '0', 'MKSTREAM');
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('BUSYGROUP'))) fail(err);
  }
}
