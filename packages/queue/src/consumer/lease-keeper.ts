import type { ConsumerOptions } from '../invocation-consumer.ts';
import { WORKERS_GROUP } from '../keys.ts';
import type { RedisClient } from '../redis-connection.ts';

/**
 * The leases of the jobs running on one consumer. A delivered job's idle time on the group's pending list is its
 * lease; renewing it (`XCLAIM … JUSTID`, every half lease) keeps the maintenance passes from taking it as stalled.
 */
export interface LeaseKeeper {
  /** Jobs running here. */
  readonly held: number;
  /** A job began running here: its lease is renewed until `release`. */
  hold(entryId: string): void;
  release(entryId: string): void;
  renew(): Promise<void>;
  /** A command to Redis failed just now. */
  noteTrouble(): void;
  /** A command to Redis failed less than a lease ago: leases may have gone unrenewed since, through no stall. */
  troubledWithinLease(): boolean;
  /** Stops the renewal timer. */
  stop(): void;
}

export interface LeaseParts {
  /** The connection that renews; blocking reads never use it. */
  connection: RedisClient;
  stream: string;
  /** The consumer's name in the group: the leases are held under it. */
  consumer: string;
  fail(err: unknown): void;
}

export function createLeaseKeeper(parts: LeaseParts, opts: Pick<ConsumerOptions, 'lockDurationMs'>): LeaseKeeper {
  const { connection, stream, consumer, fail } = parts;
  /** Entry ids of the jobs running here: the leases to renew. */
  const active = new Set<string>();
  /**
   * When a command to Redis last failed (an outage, or a stall past the command timeout). Jobs Redis delivered to
   * this consumer meanwhile may not have reached it yet, so it cannot renew their leases: until a lease has passed
   * since, its maintenance pass counts nothing as stalled (else it would run such a job a second time).
   */
  let troubleAt = Number.NEGATIVE_INFINITY;

  async function renew(): Promise<void> {
    if (active.size === 0) return;
    try {
      await connection.xclaim(stream, WORKERS_GROUP, consumer, 0, ...active, 'JUSTID');
    } catch (err) {
      troubleAt = Date.now();
      fail(err);
    }
  }

  const renewal = setInterval(() => void renew(), Math.max(100, Math.floor(opts.lockDurationMs / 2)));
  renewal.unref();

  return {
    get held() {
      return active.size;
    },
    hold: (entryId) => void active.add(entryId),
    release: (entryId) => void active.delete(entryId),
    renew,
    noteTrouble: () => {
      troubleAt = Date.now();
    },
    troubledWithinLease: () => Date.now() - troubleAt < opts.lockDurationMs,
    stop: () => clearInterval(renewal),
  };
}
