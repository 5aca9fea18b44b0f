import type { ConsumerOptions } from '../invocation-consumer.ts';
import type { QueueKeys } from '../keys.ts';
import { isRedisUnavailable, type RedisClient } from '../redis-connection.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import { pause } from './pause.ts';

/**
 * How long a worker's own queue (the requests of the sequences it owns) outlives the worker's latest refresh: a
 * worker that dies without a clean shutdown leaves its keys behind this long at most.
 */
export const WORKER_QUEUE_TTL_MS = 10 * 60_000;

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

/**
 * A worker's own queue of a version (the sequences it owns): it lives while its worker does, and a clean close
 * drains it and deletes it, since no other worker ever reads it.
 */
export interface OwnQueue {
  /** Pushes the queue's keys' expiry on. */
  refreshExpiry(): Promise<void>;
  /** A forced close was asked for: the drain stops, and the keys are left to expire. */
  leaveToExpire(): void;
  readonly leftToExpire: boolean;
  /** Resolves once the queue has stayed empty a while (or it is left to expire); one drain however often asked. */
  drain(): Promise<void>;
  /** Deletes a drained own queue (its consumer group with it), unless a request arrived since. */
  removeIfEmpty(): Promise<void>;
}

export interface OwnQueueParts {
  connection: RedisClient;
  queue: QueueKeys;
  leases: Pick<LeaseKeeper, 'noteTrouble'>;
  fail(err: unknown): void;
}

type OwnQueueOptions = Pick<ConsumerOptions, 'ownQueueTtlMs' | 'ownQueueQuietMs' | 'stalledIntervalMs'>;

export function createOwnQueue(parts: OwnQueueParts, opts: OwnQueueOptions): OwnQueue {
  const { connection, queue: q, leases, fail } = parts;
  const ownQueueTtlMs = Math.max(opts.ownQueueTtlMs ?? WORKER_QUEUE_TTL_MS, 3 * opts.stalledIntervalMs);
  let forced = false;
  let draining: Promise<void> | undefined;

  /**
   * An own queue lives while its worker does: each pass pushes its keys' expiry on (a worker's queue is named by
   * the worker, so a dead one's is never read or cleaned again otherwise).
   */
  async function refreshExpiry(): Promise<void> {
    try {
      await Promise.all([q.stream, q.delayed, q.delayedJobs].map((key) => connection.pexpire(key, ownQueueTtlMs)));
    } catch (err) {
      leases.noteTrouble();
      if (!isRedisUnavailable(err)) fail(err);
    }
  }

  /**
   * Keeps reading until the own queue holds nothing (waiting, running or due for a retry) and has stayed empty for
   * `ownQueueQuietMs`. Its worker has left the live list by now (so gateways route its sequences elsewhere), but a
   * gateway that read the list just before may still be adding a request: this worker holds that sequence's state.
   */
  async function untilQuiet(): Promise<void> {
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

  return {
    refreshExpiry,
    leaveToExpire: () => {
      forced = true;
    },
    get leftToExpire() {
      return forced;
    },
    drain: () => {
      draining ??= untilQuiet();
      return draining;
    },
    async removeIfEmpty() {
      await connection.eval(REMOVE_IF_EMPTY, 3, q.stream, q.delayed, q.delayedJobs).catch((err: unknown) => fail(err));
    },
  };
}
