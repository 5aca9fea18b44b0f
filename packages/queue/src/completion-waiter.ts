import { DeadlineQueue } from './deadline-queue.ts';
import type { InvocationResult } from './invocation-result.ts';
import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';
import { parseReplyFrame } from './request-store.ts';

/** How a wait ended. `completed` carries the result when it arrived inline on this process's reply channel. */
export type WaitOutcome = { kind: 'completed'; result?: InvocationResult } | { kind: 'timeout' } | { kind: 'aborted' };

export interface Waiter {
  readonly outcome: Promise<WaitOutcome>;
  /** Settles the wait early (e.g. the state was already terminal when checked after registering). */
  settle(outcome: WaitOutcome): void;
}

export interface CompletionWaiter {
  /** This process's id: jobs it enqueues name it so their small results come back inline. */
  readonly gatewayId: string;
  /** Subscribes; resolves once Redis confirmed the subscriptions. Call before serving traffic. */
  start(): Promise<void>;
  /**
   * Registers interest in a request's completion. Register BEFORE the job is added: a fast worker
   * can finish before `add` returns. The waiter settles on completion, at `deadline` (ms epoch), or
   * when `signal` aborts (client went away).
   */
  register(requestId: string, deadline: number, signal?: AbortSignal): Waiter;
  /**
   * Calls `onAppend` whenever events are appended to the request's stream (on the same shared
   * subscription). Watch before reading the stream once, as with `register`.
   */
  watchEvents(requestId: string, onAppend: () => void): { stop(): void };
  readonly pending: number;
  /**
   * Ends every wait now (as aborted) but keeps the subscription: a stopping gateway answers its
   * long-polls with 202 while its open event streams still receive events.
   */
  endWaits(): void;
  close(): Promise<void>;
}

const TIMEOUT: WaitOutcome = { kind: 'timeout' };
const ABORTED: WaitOutcome = { kind: 'aborted' };
const COMPLETED: WaitOutcome = { kind: 'completed' };

/**
 * One subscription per process for every completion (plus this process's inline-reply channel), fanned
 * out through a map of waiters, and one timer for all their deadlines. No listener, timer or Redis poll
 * loop per request.
 */
export function createCompletionWaiter(subscriber: RedisClient, keys: Keys, gatewayId: string): CompletionWaiter {
  const waiters = new Map<string, Set<(o: WaitOutcome) => void>>();
  const deadlines = new DeadlineQueue();
  const replyChannel = keys.replies(gatewayId);
  const eventWatchers = new Map<string, Set<() => void>>();
  let count = 0;

  const wake = (requestId: string, outcome: WaitOutcome) => {
    const set = waiters.get(requestId);
    if (!set) return;
    // An inline result is handed to one waiter: it is delivered once.
    for (const settle of [...set]) {
      settle(outcome);
      if (outcome !== COMPLETED) outcome = COMPLETED;
    }
  };

  const onMessage = (channel: Buffer, message: Buffer) => {
    const name = channel.toString();
    if (name === keys.completions) wake(message.toString(), COMPLETED);
    else if (name === keys.eventsAppended) {
      for (const fn of eventWatchers.get(message.toString()) ?? []) fn();
    } else if (name === replyChannel) {
      const reply = parseReplyFrame(message);
      if (reply) wake(reply.requestId, { kind: 'completed', result: reply.result });
    }
  };

  return {
    gatewayId,
    async start() {
      subscriber.on('messageBuffer', onMessage);
      await subscriber.subscribe(keys.completions, replyChannel, keys.eventsAppended);
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
      const onAbort = () => settle(ABORTED);
      const timer = deadlines.add(deadline, () => settle(TIMEOUT));
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
        if (signal.aborted) settle(ABORTED);
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      return { outcome, settle };
    },
    watchEvents(requestId, onAppend) {
      let set = eventWatchers.get(requestId);
      if (!set) {
        set = new Set();
        eventWatchers.set(requestId, set);
      }
      set.add(onAppend);
      return {
        stop() {
          const s = eventWatchers.get(requestId);
          s?.delete(onAppend);
          if (s?.size === 0) eventWatchers.delete(requestId);
        },
      };
    },
    get pending() {
      return count;
    },
    endWaits() {
      for (const set of [...waiters.values()]) for (const settle of [...set]) settle(ABORTED);
    },
    async close() {
      deadlines.clear();
      for (const set of [...waiters.values()]) for (const settle of [...set]) settle(ABORTED);
      subscriber.off('messageBuffer', onMessage);
      eventWatchers.clear();
      await subscriber.unsubscribe(keys.completions, replyChannel, keys.eventsAppended).catch(() => {});
    },
  };
}
