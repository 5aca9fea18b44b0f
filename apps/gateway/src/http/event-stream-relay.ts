import { setTimeout as sleep } from 'node:timers/promises';
import type { EventStream, InvocationResult, RequestStore, StreamEvent, Waiter, WaitOutcome } from '@nvcf/queue';
import type { SSEStreamingApi } from 'hono/streaming';

/** The per-event size cap (issue 4: 4 MB). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** Events read from Redis at a time. */
export const EVENT_PAGE = 256;

/**
 * How long a stream that sent its function's last event waits for the answer its worker stores right after (the
 * append and the store are two steps): the request is delivered once it is there. A worker that died in between
 * costs no more than this; its job runs again and keeps its answer for a poll.
 */
const LAST_EVENT_SETTLE_MS = 2000;

/** How a started event stream goes on: from its first events, or — resuming — straight to its end. */
export type StreamStart = { kind: 'events'; first: StreamEvent[] } | { kind: 'end'; tail?: InvocationResult };

/** Wakes a loop whenever something it waits on happens. */
export interface Wake {
  notify(): void;
  /** Resolves at the next notification (or at once if one came since the last wait). */
  wait(): Promise<void>;
}

export function createWake(): Wake {
  let wake!: () => void;
  let next = new Promise<void>((r) => {
    wake = r;
  });
  return {
    notify: () => wake(),
    async wait() {
      await next;
      next = new Promise<void>((r) => {
        wake = r;
      });
    },
  };
}

/** One request's relay: where its events and answer are read, and what wakes or ends the reading. */
export interface EventRelay {
  events: EventStream;
  store: RequestStore;
  /** Told once the stream handed the request's answer out. */
  onDelivered?: (requestId: string, result: InvocationResult, streamed: boolean) => void;
  requestId: string;
  waiter: Waiter;
  /** The id the client saw last (FROM_START: none). */
  after: string;
  wake: Wake;
  /** The waiter's outcome, once it settled. */
  settled(): WaitOutcome | undefined;
  /** Whether the client left. */
  ended(): boolean;
  /** Stops the event notifications the relay was woken by. */
  stopWatching(): void;
}

/**
 * Relays the request's events from `start` until the function's last one, the window's end or the client leaving;
 * then the request is delivered (its stored answer taken), as a 200 would have delivered it.
 */
export async function relayEvents(stream: SSEStreamingApi, start: StreamStart, relay: EventRelay): Promise<void> {
  try {
    if (start.kind === 'end') {
      if (start.tail) await sendStored(stream, start.tail);
      return;
    }
    const sentLast = await sendUntilEnd(stream, start.first, relay);
    // Delivered below only once stored: a poll after the stream then finds nothing to hand out, as after a 200.
    if (sentLast && !relay.settled()) {
      const stop = new AbortController();
      const timeout = sleep(LAST_EVENT_SETTLE_MS, undefined, { signal: stop.signal }).catch(() => undefined);
      await Promise.race([relay.waiter.outcome, timeout]);
      stop.abort();
    }
  } finally {
    relay.stopWatching();
    relay.waiter.settle({ kind: 'aborted' });
    // The answer went out as events: the request is delivered, as a 200 would have delivered it.
    await take(relay).catch(() => undefined);
  }
}

/**
 * Sends events page by page, as they are appended; true when the function's last event went out (not a cut: the
 * window, the client, the gateway stopping).
 */
async function sendUntilEnd(stream: SSEStreamingApi, first: StreamEvent[], relay: EventRelay): Promise<boolean> {
  const { events, requestId, wake } = relay;
  let last = relay.after;
  let batch = first;
  for (;;) {
    for (const e of batch) {
      last = e.id;
      if (await send(stream, e)) return e.last;
    }
    // The window closed (or the gateway is stopping and its grace ran out: then the stream is cut).
    if (relay.ended() || stream.aborted || relay.settled()?.kind === 'timeout') return false;
    // A full page may have more behind it that no append will announce again (a late or resumed
    // reader of a finished stream): only a reader that is caught up waits.
    const caughtUp = batch.length < EVENT_PAGE;
    if (relay.settled()?.kind === 'completed') {
      // Completion can beat the last append's notification: read on after it, page by page. A stream
      // that ends with no last event had its answer stored instead (a re-delivered job that failed).
      batch = await events.read(requestId, last, EVENT_PAGE);
      if (batch.length > 0) continue;
      const view = await take(relay);
      if (view.kind === 'result') await sendStored(stream, view.result);
      return false;
    }
    if (caughtUp) await wake.wait();
    batch = await events.read(requestId, last, EVENT_PAGE);
  }
}

/** Writes one event; true when nothing may follow it. */
async function send(stream: SSEStreamingApi, e: StreamEvent): Promise<boolean> {
  // An empty last event only marks the end (a relayed stream's: it is known to end after its last event).
  if (e.last && !e.error && e.data === '') return true;
  if (Buffer.byteLength(e.data) > MAX_EVENT_BYTES) {
    // One event must stay a reasonable unit for every client and proxy on the way.
    await stream.writeSSE({
      event: 'error',
      data: JSON.stringify({ error: `event exceeds the ${MAX_EVENT_BYTES}-byte limit of one server-sent event` }),
    });
    return true;
  }
  await stream.writeSSE({ data: e.data, id: e.id, ...(e.error ? { event: 'error' } : {}) });
  return e.last;
}

/** Takes the stored answer: from then on the request is delivered. */
async function take({ store, requestId, onDelivered }: EventRelay) {
  const view = await store.take(requestId);
  if (view.kind === 'result') onDelivered?.(requestId, view.result, true);
  return view;
}

/** Writes a stored answer as the stream's end (it has no id: it is not in the request's stream). */
async function sendStored(stream: SSEStreamingApi, result: InvocationResult): Promise<void> {
  const failed = !result.ok;
  await stream.writeSSE({ data: result.body.toString('utf8'), ...(failed ? { event: 'error' } : {}) });
}
