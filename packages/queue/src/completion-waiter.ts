import type { Redis } from 'ioredis';
import { DeadlineQueue } from './deadline-queue.ts';
import type { Keys } from './keys.ts';

export type WaitOutcome = 'completed' | 'timeout' | 'aborted';

export interface Waiter {
  readonly outcome: Promise<WaitOutcome>;
  /** Settles the wait early (e.g. the state was already terminal when checked after registering). */
  settle(outcome: WaitOutcome): void;
}

export interface CompletionWaiter {
  /** Subscribes; resolves once Redis confirmed the subscription. Call before serving traffic. */
  start(): Promise<void>;
  /**
   * Registers interest in a request's completion. Register BEFORE the job is added: a fast worker
   * can finish before `add` returns. The waiter settles on completion, at `deadline` (ms epoch), or
   * when `signal` aborts (client went away).
   */
  register(requestId: string, deadline: number, signal?: AbortSignal): Waiter;
  readonly pending: number;
  close(): Promise<void>;
}

/**
 * One subscription per process for every completion, fanned out through a map of waiters, and one
 * timer for all their deadlines. No listener, timer or Redis poll loop per request.
 */
export function createCompletionWaiter(subscriber: Redis, keys: Keys): CompletionWaiter {
  const waiters = new Map<string, Set<(o: WaitOutcome) => void>>();
  const deadlines = new DeadlineQueue();
  let count = 0;

  const onMessage = (channel: string, requestId: string) => {
    if (channel !== keys.completions) return;
    const set = waiters.get(requestId);
    if (!set) return;
    for (const settle of [...set]) settle('completed');
  };

  return {
    async start() {
      subscriber.on('message', onMessage);
      await subscriber.subscribe(keys.completions);
    },
    register(requestId, deadline, signal) {
      let settleOutcome!: (o: WaitOutcome) => void;
      const outcome = new Promise<WaitOutcome>((resolve) => {
        settleOutcome = resolve;
      });
      let set = waiters.get(requestId);
      if (!set) {
        set = new Set();
        waiters.set(requestId, set);
      }
      count++;
      let done = false;
      const onAbort = () => settle('aborted');
      const timer = deadlines.add(deadline, () => settle('timeout'));
      const settle = (o: WaitOutcome) => {
        if (done) return;
        done = true;
        count--;
        timer.cancel();
        signal?.removeEventListener('abort', onAbort);
        const s = waiters.get(requestId);
        s?.delete(settle);
        if (s?.size === 0) waiters.delete(requestId);
        settleOutcome(o);
      };
      set.add(settle);
      if (signal) {
        if (signal.aborted) settle('aborted');
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      return { outcome, settle };
    },
    get pending() {
      return count;
    },
    async close() {
      deadlines.clear();
      for (const set of [...waiters.values()]) for (const settle of [...set]) settle('aborted');
      subscriber.off('message', onMessage);
      await subscriber.unsubscribe(keys.completions).catch(() => {});
    },
  };
}
