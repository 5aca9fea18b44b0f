import type { StreamEntry } from './job-entry.ts';
import type { RunJob } from './job-runner.ts';
import type { LeaseKeeper } from './lease-keeper.ts';

/**
 * The jobs running on one consumer, `concurrency` at most: each is run as it is read, its lease held until it ends.
 * The read loop waits on `changed()` while no slot is free.
 */
export interface JobSlots {
  /** Jobs run at once; changing it wakes the read loop. */
  concurrency: number;
  /** Slots free now: how many jobs the next read may ask for (none when 0 or less). */
  readonly free: number;
  /** Resolves at the next `wake()`: a job ended, or `concurrency` changed. */
  changed(): Promise<void>;
  wake(): void;
  start(entry: StreamEntry): void;
  /** Resolves once every job running now has ended. */
  settled(): Promise<unknown>;
}

export interface SlotParts {
  leases: LeaseKeeper;
  run: RunJob;
  fail(err: unknown): void;
}

export function createJobSlots(parts: SlotParts, initialConcurrency: number): JobSlots {
  const { leases, run, fail } = parts;
  let concurrency = initialConcurrency;
  const running = new Set<Promise<void>>();
  let wake: () => void = () => {};

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

  return {
    get concurrency() {
      return concurrency;
    },
    set concurrency(n: number) {
      concurrency = n;
      wake();
    },
    get free() {
      return concurrency - leases.held;
    },
    changed: () =>
      new Promise<void>((resolve) => {
        wake = resolve;
      }),
    wake: () => wake(),
    start,
    settled: () => Promise.all(running),
  };
}
