import type { InvocationResult } from '@nvcf/queue';

/** A request's function and version: what every per-request observation is labelled by. */
export interface InvocationLabels {
  requestId: string;
  functionId: string;
  versionId: string;
}

/**
 * What the invocation service reports of a request, in the order it happens on this gateway. Timestamps are
 * taken where the moment happens (`Date.now()`), so a listener measures durations without being called in time.
 */
export interface InvocationEventMap {
  /**
   * Admitted and about to be queued; `at` starts its latency. Reported before the add: a fast worker's
   * completion can reach a waiter here before the add returns, and must find the request already known.
   */
  accepted: InvocationLabels & { at: number };
  /** The add queued it (after `accepted`): it runs once a worker takes it. */
  queued: InvocationLabels;
  /**
   * The add did not queue it (after `accepted`): `error` refused or broke it (a full queue, Redis failing);
   * absent, the request was queued already (adding it again does nothing).
   */
  failed: { requestId: string; error?: unknown };
  /**
   * A client of this gateway takes up a request accepted before, perhaps by another gateway (a status poll, an
   * event stream following it, a retry with the same Idempotency-Key); read from the request's record.
   */
  followed: InvocationLabels;
  /** Its completion reached a waiter on this gateway (a client waiting for it here), at `at`. */
  completed: { requestId: string; at: number };
  /**
   * The client has the final answer: written whole (`streamed: false`), or handed out by an event stream.
   * `status` is the HTTP status the client saw: 302 for a stored large result, else the function's.
   */
  delivered: { requestId: string; status: number; streamed: boolean };
}

export type InvocationEventName = keyof InvocationEventMap;

export type InvocationListener<K extends InvocationEventName> = (event: InvocationEventMap[K]) => void;

/** Where lifecycle events are heard (metrics, traces, logs subscribe here). */
export interface InvocationEvents {
  /** Calls `listener` with every `name` event from now on; the returned function stops that. */
  on<K extends InvocationEventName>(name: K, listener: InvocationListener<K>): () => void;
}

/** The emitting side, kept by the invocation service. */
export interface InvocationEventEmitter extends InvocationEvents {
  emit<K extends InvocationEventName>(name: K, event: InvocationEventMap[K]): void;
}

/**
 * A typed listener list per event. Listeners run synchronously, in subscription order; one that throws is
 * reported to `onError` and the rest still run: an observer must never fail the invocation it observes.
 *
 * @example
 * const events = createInvocationEvents((err) => log.warn({ err }, 'listener failed'));
 * events.on('queued', (e) => accepted.inc({ function_id: e.functionId }));
 */
export function createInvocationEvents(
  onError: (err: unknown, name: InvocationEventName) => void,
): InvocationEventEmitter {
  const listeners: { [K in InvocationEventName]: Set<InvocationListener<K>> } = {
    accepted: new Set(),
    queued: new Set(),
    failed: new Set(),
    followed: new Set(),
    completed: new Set(),
    delivered: new Set(),
  };
  return {
    on(name, listener) {
      const set = listeners[name];
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit(name, event) {
      for (const listener of listeners[name]) {
        try {
          listener(event);
        } catch (err) {
          onError(err, name);
        }
      }
    },
  };
}

/** The HTTP status a client sees for a result: a stored large one is a 302 to it. */
export function answerStatus(result: InvocationResult): number {
  return result.objectKey ? 302 : result.status;
}
