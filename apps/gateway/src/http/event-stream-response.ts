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
import { createWake, EVENT_PAGE, relayEvents, type StreamStart, type Wake } from './event-stream-relay.ts';
import { invocationResponse } from './invocation-response.ts';

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
type Start = StreamStart | { kind: 'answer'; outcome: InvocationOutcome };

/** A resumed read: the event the client saw last, when the stream holds it. */
type Resume = { seen: StreamEvent | undefined };

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
    return answerResponse(c, deps, start.outcome, resultUrl);
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
    await relayEvents(stream, start, {
      ...deps,
      requestId,
      waiter,
      after,
      wake,
      settled: () => settled,
      ended: () => ended,
      stopWatching: () => watch.stop(),
    });
  });
}

/** The request's answer as a plain HTTP response, before any event (the window closed, or it ended without one). */
function answerResponse(
  c: Context,
  deps: EventStreamDeps,
  answer: InvocationOutcome,
  resultUrl: (requestId: string) => string,
): Response {
  // Handed out once written (a refusal included): a dropped connection can poll for it again.
  deliverWhenWritten(c, answer, async (id, result) => {
    deps.onDelivered?.(id, result, false);
    await deps.store.markDelivered(id).catch(() => undefined);
  });
  return invocationResponse(answer, c.req.path, resultUrl);
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
  wake: Wake,
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
