import { NvcfHeader, NvcfStatus } from '@nvcf/protocol';
import type {
  CompletionWaiter,
  EventStream,
  InvocationResult,
  RequestStore,
  RequestView,
  StreamEvent,
  Waiter,
  WaitOutcome,
} from '@nvcf/queue';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InvocationOutcome } from '../invocation/invocation-service.ts';
import { deliverWhenWritten } from './after-response.ts';
import { invocationResponse } from './invocation-response.ts';

/** The per-event size cap (issue 4: 4 MB). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export interface EventStreamDeps {
  events: EventStream;
  completions: CompletionWaiter;
  store: RequestStore;
}

/** How a request's event stream begins: with its first events, or as a plain HTTP answer. */
type Start = { kind: 'events'; first: StreamEvent[] } | { kind: 'answer'; outcome: InvocationOutcome };

/** Wakes a loop whenever something it waits on happens. */
function createWake() {
  let wake!: () => void;
  let next = new Promise<void>((r) => {
    wake = r;
  });
  return {
    notify: () => wake(),
    /** Resolves at the next notification (or at once if one came since the last wait). */
    async wait() {
      await next;
      next = new Promise<void>((r) => {
        wake = r;
      });
    },
  };
}

/**
 * Streams a request's events as server-sent events, as NVCF answers `Accept: text/event-stream`.
 *
 * Nothing is sent until the function has produced its first event or finished: a request refused
 * before any output (a 4xx from the function) is then answered with that status and its problem+json
 * body, exactly like the same call without SSE — clients such as LangChain's check the status before
 * they read a stream. A window that ends with no event answers 202 with `NVCF-REQID` (poll for it),
 * and an unknown request id 404. Once the first event is out: the headers (`NVCF-REQID`,
 * `NVCF-STATUS: fulfilled`), every event as it is appended, and the end when the function's last event
 * arrives, the window closes or the client leaves; a failure after the start is `event: error` with
 * the problem+json. Events are read from the request's Redis Stream, woken by the process's one
 * subscription; nothing is lost to a late start.
 */
export async function eventStreamResponse(
  c: Context,
  deps: EventStreamDeps,
  requestId: string,
  waiter: Waiter,
  resultUrl: (requestId: string) => string,
  opts: { cancelOnLeave: boolean },
): Promise<Response> {
  const wake = createWake();
  const watch = deps.completions.watchEvents(requestId, wake.notify);
  let settled: WaitOutcome | undefined;
  void waiter.outcome.then((o) => {
    settled = o;
    wake.notify();
  });
  let start: Start;
  try {
    start = await untilStart(deps, requestId, () => settled, wake);
  } catch (err) {
    watch.stop();
    waiter.settle({ kind: 'aborted' });
    throw err;
  }
  if (start.kind === 'answer') {
    watch.stop();
    waiter.settle({ kind: 'aborted' });
    // Handed out once written (a refusal included): a dropped connection can poll for it again.
    deliverWhenWritten(c, start.outcome, (id) => deps.store.markDelivered(id).catch(() => undefined));
    return invocationResponse(start.outcome, c.req.path, resultUrl);
  }

  c.header(NvcfHeader.REQID, requestId);
  c.header(NvcfHeader.STATUS, NvcfStatus.FULFILLED);
  c.header('cache-control', 'no-cache');
  return streamSSE(c, async (stream) => {
    let ended = false;
    stream.onAbort(() => {
      ended = true;
      wake.notify();
      // The client that started the request left: the worker stops generating (it checks between
      // tokens). A follower leaving (another reader of the same request) stops nothing.
      if (opts.cancelOnLeave) void deps.events.cancel(requestId).catch(() => undefined);
    });
    /** Writes one event; true when nothing may follow it. */
    const send = async (e: StreamEvent): Promise<boolean> => {
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
    };
    try {
      let last = '0';
      let batch = start.first;
      for (;;) {
        let finished = false;
        for (const e of batch) {
          finished = await send(e);
          last = e.id;
          if (finished) break;
        }
        // The window closed (or the gateway is stopping and its grace ran out: then the stream is cut).
        if (finished || ended || stream.aborted || settled?.kind === 'timeout') break;
        if (settled?.kind === 'completed') {
          // Completion can beat the last append's notification: read once more after it. A stream
          // that ends with no last event had its answer stored instead (a re-delivered job that failed).
          const rest = await deps.events.read(requestId, last);
          for (const e of rest) if (await send(e)) return;
          const view = await deps.store.take(requestId);
          if (view.kind === 'result') {
            const failed = view.result.status >= 400;
            await stream.writeSSE({ data: view.result.body.toString('utf8'), ...(failed ? { event: 'error' } : {}) });
          }
          break;
        }
        await wake.wait();
        batch = await deps.events.read(requestId, last);
      }
    } finally {
      watch.stop();
      waiter.settle({ kind: 'aborted' });
      // The answer went out as events: the request is delivered, as a 200 would have delivered it.
      await deps.store.take(requestId).catch(() => undefined);
    }
  });
}

/**
 * Waits for the request's first event, or for it to end without one: then the answer is its stored
 * result (a refusal keeps its status; a request that was not started as a stream is one event), 202
 * when the window closed first, 404 when there is no such request.
 */
async function untilStart(
  deps: EventStreamDeps,
  requestId: string,
  outcome: () => WaitOutcome | undefined,
  wake: { wait(): Promise<void> },
): Promise<Start> {
  for (;;) {
    const settled = outcome();
    const first = await deps.events.read(requestId, '0');
    if (first.length > 0) return { kind: 'events', first };
    if (settled === undefined) {
      const view = await deps.store.peek(requestId);
      if (view.kind === 'pending') {
        await wake.wait();
        continue;
      }
      return fromView(requestId, view);
    }
    if (settled.kind === 'completed' && settled.result) return fromResult(requestId, settled.result);
    const view = await deps.store.peek(requestId);
    // The window closed, or the client left, or the gateway is stopping: the request runs on.
    if (view.kind === 'pending') {
      return {
        kind: 'answer',
        outcome: {
          kind: 'pending',
          requestId,
          percent: view.percent,
          ...(view.partial ? { partial: view.partial } : {}),
        },
      };
    }
    return fromView(requestId, view);
  }
}

function fromView(requestId: string, view: RequestView): Start {
  if (view.kind === 'result') return fromResult(requestId, view.result);
  return { kind: 'answer', outcome: { kind: 'unknown', requestId } };
}

function fromResult(requestId: string, result: InvocationResult): Start {
  // A failure, or an answer behind a 302, is answered as HTTP; anything else is the stream's one event.
  if (result.status >= 400 || result.objectKey)
    return { kind: 'answer', outcome: { kind: 'result', requestId, result } };
  return { kind: 'events', first: [{ id: '0-1', data: result.body.toString('utf8'), last: true, error: false }] };
}
