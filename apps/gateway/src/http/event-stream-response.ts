import { NvcfHeader, NvcfStatus } from '@nvcf/protocol';
import type { CompletionWaiter, EventStream, RequestStore, Waiter } from '@nvcf/queue';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';

/** The per-event size cap (issue 4: 4 MB). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export interface EventStreamDeps {
  events: EventStream;
  completions: CompletionWaiter;
  store: RequestStore;
}

/**
 * Streams a request's events as server-sent events (nvcf-api.md §10): headers at once
 * (`NVCF-REQID`, `NVCF-STATUS: fulfilled`), each event as it is appended, the end when the function's
 * last event arrives, the window closes or the client leaves. Events are read from the request's Redis
 * Stream, woken by the process's one subscription; nothing is lost to a late start.
 */
export function eventStreamResponse(c: Context, deps: EventStreamDeps, requestId: string, waiter: Waiter): Response {
  c.header(NvcfHeader.REQID, requestId);
  c.header(NvcfHeader.STATUS, NvcfStatus.FULFILLED);
  c.header('cache-control', 'no-cache');
  return streamSSE(c, async (stream) => {
    let wake!: () => void;
    let appended = new Promise<void>((r) => {
      wake = r;
    });
    const watch = deps.completions.watchEvents(requestId, () => wake());
    let ended = false;
    let completed = false;
    void waiter.outcome.then((o) => {
      // Completion can beat the last append's notification; a read after it finds the events.
      if (o.kind === 'completed') completed = true;
      // The window closed. (An abort is either the client leaving, seen by onAbort, or a stopping
      // gateway ending its waits: the stream itself runs on, within the shutdown grace.)
      else if (o.kind === 'timeout') ended = true;
      wake();
    });
    stream.onAbort(() => {
      ended = true;
      wake();
      // The client left: the worker stops generating (it checks between tokens).
      void deps.events.cancel(requestId).catch(() => undefined);
    });
    try {
      let last = '0';
      for (;;) {
        const batch = await deps.events.read(requestId, last);
        let finished = false;
        for (const e of batch) {
          if (Buffer.byteLength(e.data) > MAX_EVENT_BYTES) {
            // One event must stay a reasonable unit for every client and proxy on the way.
            await stream.writeSSE({
              event: 'error',
              data: JSON.stringify({
                error: `event exceeds the ${MAX_EVENT_BYTES}-byte limit of one server-sent event`,
              }),
            });
            finished = true;
            break;
          }
          await stream.writeSSE({ data: e.data, id: e.id });
          last = e.id;
          finished ||= e.last;
        }
        if (finished || ended || stream.aborted) break;
        if (completed) {
          // Completed without a last event: a request that was not started as a stream. Its stored
          // answer is the one event (a reader on another gateway, or a late one, gets it this way).
          const rest = await deps.events.read(requestId, last);
          for (const e of rest) await stream.writeSSE({ data: e.data, id: e.id });
          if (!rest.some((e) => e.last)) {
            const view = await deps.store.take(requestId);
            if (view.kind === 'result') await stream.writeSSE({ data: view.result.body.toString('utf8') });
          }
          break;
        }
        await appended;
        appended = new Promise<void>((r) => {
          wake = r;
        });
      }
    } finally {
      watch.stop();
      waiter.settle({ kind: 'aborted' });
      // The answer went out as events: the request is delivered, as a 200 would have delivered it.
      await deps.store.take(requestId).catch(() => undefined);
    }
  });
}
