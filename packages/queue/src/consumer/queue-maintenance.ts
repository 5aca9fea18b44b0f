import type { ConsumerOptions } from '../invocation-consumer.ts';
import { type Keys, type QueueKeys, WORKERS_GROUP } from '../keys.ts';
import type { RequestScripts } from '../lua-scripts.ts';
import type { RequestStore } from '../request-store.ts';
import { parseFailedEntry, retryEntry } from './job-entry.ts';
import type { LeaseKeeper } from './lease-keeper.ts';

/** How long a consumer that read nothing and holds no job may stay in the group (dead workers' names go). */
const IDLE_CONSUMER_MS = 10 * 60_000;
/** A lease no job outlasts: the maintenance pass's idle bound while it must count nothing as stalled. */
const NEVER_STALLED_MS = 2 ** 31;
/** Most jobs one maintenance pass recovers or promotes. */
const MAINTAIN_BATCH = 100;

/**
 * The upkeep of a queue that every consumer shares (maintain-queue.lua): jobs whose lease ran out go back into the
 * stream, or are failed once they stalled too often; retries that are due go back too; consumers long idle leave
 * the group. A failed try waits in the queue's delayed set until its retry is due.
 */
export interface QueueMaintenance {
  /** One pass; every `stalledIntervalMs`, and when a retry of this consumer's is due. */
  maintain(): Promise<void>;
  /** Queues a failed try again after a back-off (200 ms, 400 ms…): `attempt` tries have been made. */
  retry(entryId: string, requestId: string, fields: Map<string, string>, attempt: number): Promise<void>;
  /** Stops the passes and the retries' timers (a retry still due is put back by another consumer's pass). */
  stop(): void;
}

export interface MaintenanceParts {
  scripts: RequestScripts;
  keys: Keys;
  queue: QueueKeys;
  versionId: string;
  store: RequestStore;
  leases: LeaseKeeper;
  /** Pushes an own queue's expiry on; nothing for a shared queue. */
  refreshExpiry(): Promise<void>;
  fail(err: unknown): void;
}

type MaintenanceOptions = Pick<ConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount' | 'failure'>;

export function createQueueMaintenance(parts: MaintenanceParts, opts: MaintenanceOptions): QueueMaintenance {
  const { scripts: r, keys, queue: q, versionId, store, leases, refreshExpiry, fail } = parts;
  let stopped = false;
  const retryPasses = oneShotTimers(() => void maintain());

  async function maintain(): Promise<void> {
    if (stopped) return;
    // This consumer's own leases first, on the same connection: after Redis was away (renewals could not reach
    // it), its running jobs would otherwise look stalled to its own pass and run twice.
    await leases.renew();
    await refreshExpiry();
    try {
      const failed = await r.nvcfMaintainQueue(
        q.stream,
        q.delayed,
        q.delayedJobs,
        WORKERS_GROUP,
        leases.troubledWithinLease() ? NEVER_STALLED_MS : opts.lockDurationMs,
        opts.maxStalledCount,
        Date.now(),
        keys.requestKeyPrefix,
        MAINTAIN_BATCH,
        IDLE_CONSUMER_MS,
      );
      await answerStalled(store, versionId, opts, failed);
    } catch (err) {
      leases.noteTrouble();
      fail(err);
    }
  }

  async function retry(entryId: string, requestId: string, fields: Map<string, string>, attempt: number) {
    const delayMs = 200 * 2 ** (attempt - 1);
    const entry = retryEntry(requestId, fields, attempt);
    const dueAt = Date.now() + delayMs;
    await r.nvcfRetryJob(q.stream, q.delayed, q.delayedJobs, WORKERS_GROUP, entryId, requestId, entry, dueAt);
    // The retry's keys may be new: they expire like the queue's.
    await refreshExpiry();
    // This worker puts it back when due; if it dies first, any worker's maintenance pass does.
    retryPasses.after(delayMs + 5);
  }

  const passes = setInterval(() => void maintain(), opts.stalledIntervalMs);
  passes.unref();

  return {
    maintain,
    retry,
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(passes);
      retryPasses.clear();
    },
  };
}

/** Answers the requests whose jobs a pass gave up on (`failed`: their entries, as maintain-queue.lua returns them). */
async function answerStalled(
  store: RequestStore,
  versionId: string,
  opts: Pick<ConsumerOptions, 'maxStalledCount' | 'failure'>,
  failed: string[],
): Promise<void> {
  for (const entry of failed) {
    const { requestId: id, job } = parseFailedEntry(entry, versionId);
    const reason = `the job stalled more than ${opts.maxStalledCount} times (its worker stopped or hung)`;
    await store.complete(id, opts.failure(id, reason), job.success ? job.data.reply : undefined);
  }
}

/** Timers that each call `fire` once; `clear` cancels those not yet fired. They keep no process alive. */
function oneShotTimers(fire: () => void): { after(ms: number): void; clear(): void } {
  const timers = new Set<NodeJS.Timeout>();
  return {
    after(ms) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        fire();
      }, ms);
      timer.unref();
      timers.add(timer);
    },
    clear() {
      for (const t of timers) clearTimeout(t);
    },
  };
}
