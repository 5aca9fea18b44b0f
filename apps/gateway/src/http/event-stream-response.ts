import { setTimeout as sleep } from 'node:timers/promises';
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
  /** How long a request whose starting stream dropped waits for its client to resume before it is cancelled. */
  resumeGraceMs: number;
  /** Told once a request's answer was handed out by a stream: as events (`streamed`) or as the stream's HTTP answer. */
  onDelivered?: (requestId: string, result: InvocationResult, streamed: boolean) => void;
}

/** The client of the stream in charge left: cancel now, or once the grace passed with no resume attached. */
async function leave(deps: EventStreamDeps, requestId: string, attachment: Promise<number>): Promise<void> {
  const mine = await attachment;
  if (deps.resumeGraceMs === 0) {
    await deps.events.cancel(requestId);
    return;
  }
  setTimeout(
    () => void deps.events.cancelUnlessResumed(requestId, mine).catch(() => undefined),
    deps.resumeGraceMs,
  ).unref();
}

/** Events read from Redis at a time. */
const EVENT_PAGE = 256;
/**
 * How long a stream that sent its function's last event waits for the answer its worker stores right after (the
 * append and the store are two steps): the request is delivered once it is there. A worker that died in between
 * costs no more than this; its job runs again and keeps its answer for a poll.
 */
const LAST_EVENT_SETTLE_MS = 2000;

/** Where a stream is read from when the client has seen nothing of it. */
export const FROM_START = '0';

const STREAM_ID = /^(\d+)-(\d+)$/;
const MAX_U64 = 2n ** 64n - 1n;

/**
 * The `Last-Event-ID` request header (WHATWG HTML, server-sent events: a reconnecting client sends the id
 * of the last event it received) as the Redis Stream id to read after. Only an id a stream can hold
 * (`<ms>-<seq>`, each a 64-bit unsigned number) resumes; anything else, or none, reads from the start.
 *
 * @example
 * parseLastEventId('1795531370357-1'); // '1795531370357-1'
 * parseLastEventId('garbage'); // '0'
 */
export function parseLastEventId(header: string | undefined): string {
  const m = STREAM_ID.exec(header?.trim() ?? '');
  if (!m) return FROM_START;
  const ms = BigInt(m[1] ?? '0');
  const seq = BigInt(m[2] ?? '0');
  // Redis refuses an id past 64 bits (that would be a 500); 0-0 precedes every event.
  if (ms > MAX_U64 || seq > MAX_U64 || ms + seq === 0n) return FROM_START;
  return `${ms}-${seq}`;
}

/**
 * How a request's event stream begins: with its first events, as a plain HTTP answer, or — resuming
 * after events the client already has — with nothing left to send but, for a stream cut short by a
 * failure, the stored answer.
 */
type Start =
  | { kind: 'events'; first: StreamEvent[] }
  | { kind: 'end'; tail?: InvocationResult }
  | { kind: 'answer'; outcome: InvocationOutcome };

/** A resumed read: the event the client saw last, when the stream holds it. */
type Resume = { seen: StreamEvent | undefined };

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
 *
 * `opts.after` resumes (`Last-Event-ID`, see `parseLastEventId`): only the events after that one are
 * sent. Resuming after a stream's last event is a 200 stream that simply ends, whatever became of the
 * request record since (another reader may have taken it: a dropped stream takes it too).
 */
export async function eventStreamResponse(
  c: Context,
  deps: EventStreamDeps,
  requestId: string,
  waiter: Waiter,
  resultUrl: (requestId: string) => string,
  opts: { cancelOnLeave: boolean; after?: string },
): Promise<Response> {
  const after = opts.after ?? FROM_START;
  // The stream in charge of the request (it started it, or resumes it) stops it when its client leaves;
  // taking charge happens at once, before any event, so that a resume always outdates the stream it replaces.
  const attachment = opts.cancelOnLeave ? deps.events.attach(requestId) : undefined;
  attachment?.catch(() => undefined);
  const wake = createWake();
  const watch = deps.completions.watchEvents(requestId, wake.notify);
  let settled: WaitOutcome | undefined;
  void waiter.outcome.then((o) => {
    settled = o;
    wake.notify();
  });
  let start: Start;
  try {
    start = await untilStart(deps, requestId, after, () => settled, wake);
  } catch (err) {
    watch.stop();
    waiter.settle({ kind: 'aborted' });
    throw err;
  }
  if (start.kind === 'answer') {
    watch.stop();
    waiter.settle({ kind: 'aborted' });
    // The client in charge left before any event reached it: that is leaving too.
    if (attachment && c.req.raw.signal.aborted) void leave(deps, requestId, attachment).catch(() => undefined);
    // Handed out once written (a refusal included): a dropped connection can poll for it again.
    const answer = start.outcome;
    deliverWhenWritten(c, answer, async (id, result) => {
      deps.onDelivered?.(id, result, false);
      await deps.store.markDelivered(id).catch(() => undefined);
    });
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
      // tokens), unless the client comes back within the grace (a dropped connection resumed with
      // Last-Event-ID takes the request over). A follower leaving stops nothing.
      if (attachment) void leave(deps, requestId, attachment).catch(() => undefined);
    });
    /** Writes one event; true when nothing may follow it. */
    const send = async (e: StreamEvent): Promise<boolean> => {
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
    };
    /** Takes the stored answer: from then on the request is delivered. */
    const take = async () => {
      const view = await deps.store.take(requestId);
      if (view.kind === 'result') deps.onDelivered?.(requestId, view.result, true);
      return view;
    };
    /** Writes a stored answer as the stream's end (it has no id: it is not in the request's stream). */
    const sendStored = async (result: InvocationResult) => {
      const failed = !result.ok;
      await stream.writeSSE({ data: result.body.toString('utf8'), ...(failed ? { event: 'error' } : {}) });
    };
    try {
      if (start.kind === 'end') {
        if (start.tail) await sendStored(start.tail);
        return;
      }
      let last = after;
      let batch = start.first;
      /** The function's last event went out (not a cut: the window, the client, the gateway stopping). */
      let sentLast = false;
      for (;;) {
        let finished = false;
        for (const e of batch) {
          finished = await send(e);
          last = e.id;
          if (finished) {
            sentLast = e.last;
            break;
          }
        }
        // The window closed (or the gateway is stopping and its grace ran out: then the stream is cut).
        if (finished || ended || stream.aborted || settled?.kind === 'timeout') break;
        // A full page may have more behind it that no append will announce again (a late or resumed
        // reader of a finished stream): only a reader that is caught up waits.
        const caughtUp = batch.length < EVENT_PAGE;
        if (settled?.kind === 'completed') {
          // Completion can beat the last append's notification: read on after it, page by page. A stream
          // that ends with no last event had its answer stored instead (a re-delivered job that failed).
          batch = await deps.events.read(requestId, last, EVENT_PAGE);
          if (batch.length > 0) continue;
          const view = await take();
          if (view.kind === 'result') await sendStored(view.result);
          break;
        }
        if (caughtUp) await wake.wait();
        batch = await deps.events.read(requestId, last, EVENT_PAGE);
      }
      // Delivered below only once stored: a poll after the stream then finds nothing to hand out, as after a 200.
      if (sentLast && !settled) {
        const stop = new AbortController();
        const timeout = sleep(LAST_EVENT_SETTLE_MS, undefined, { signal: stop.signal }).catch(() => undefined);
        await Promise.race([waiter.outcome, timeout]);
        stop.abort();
      }
    } finally {
      watch.stop();
      waiter.settle({ kind: 'aborted' });
      // The answer went out as events: the request is delivered, as a 200 would have delivered it.
      await take().catch(() => undefined);
    }
  });
}

/**
 * Waits for the request's first event (after `after`), or for it to end without one: then the answer
 * is its stored result (a refusal keeps its status; a request that was not started as a stream is one
 * event), 202 when the window closed first, 404 when there is no such request. A resumed read whose
 * client already has the stream's last event ends at once; one that finds the request finished with
 * nothing after its event ends too (with the stored answer when that event was not the stream's last:
 * a stream cut short by a failure, whose answer was stored instead).
 */
async function untilStart(
  deps: EventStreamDeps,
  requestId: string,
  after: string,
  outcome: () => WaitOutcome | undefined,
  wake: { wait(): Promise<void> },
): Promise<Start> {
  let resume: Resume | undefined;
  if (after !== FROM_START) {
    const seen = await eventAt(deps.events, requestId, after);
    // Nothing follows a last event: no need to wait for (or look at) the request's completion.
    if (seen?.last) return { kind: 'end' };
    resume = { seen };
  }
  for (;;) {
    const settled = outcome();
    const first = await deps.events.read(requestId, after, EVENT_PAGE);
    if (first.length > 0) return { kind: 'events', first };
    if (settled === undefined) {
      const view = await deps.store.peek(requestId);
      if (view.kind === 'pending') {
        await wake.wait();
        continue;
      }
      return fromView(requestId, view, resume);
    }
    if (settled.kind === 'completed' && settled.result) return fromResult(requestId, settled.result, resume);
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
    return fromView(requestId, view, resume);
  }
}

function fromView(requestId: string, view: RequestView, resume: Resume | undefined): Start {
  if (view.kind === 'result') return fromResult(requestId, view.result, resume);
  // A resumed client had its events (a stream that dropped, or was read to its end, took the result).
  if (view.kind === 'delivered' && resume) return { kind: 'end' };
  return { kind: 'answer', outcome: { kind: 'unknown', requestId } };
}

function fromResult(requestId: string, result: InvocationResult, resume: Resume | undefined): Start {
  // A resumed client already has the answer's events: only a stream cut short still owes it the answer
  // (an id the stream does not hold, such as the one event's '0-1' below, saw the answer already).
  if (resume) return resume.seen ? { kind: 'end', tail: result } : { kind: 'end' };
  // A failure, or an answer behind a 302, is answered as HTTP; anything else is the stream's one event.
  if (!result.ok || result.objectKey) return { kind: 'answer', outcome: { kind: 'result', requestId, result } };
  return { kind: 'events', first: [{ id: '0-1', data: result.body.toString('utf8'), last: true, error: false }] };
}

/** The event with this id, when the request's stream holds it. */
async function eventAt(events: EventStream, requestId: string, id: string): Promise<StreamEvent | undefined> {
  // `read` starts after an id: start after the greatest id below this one.
  const [ms = 0n, seq = 0n] = id.split('-').map(BigInt);
  const before = seq > 0n ? `${ms}-${seq - 1n}` : `${ms - 1n}-${MAX_U64}`;
  const [e] = await events.read(requestId, before, 1);
  return e?.id === id ? e : undefined;
}
