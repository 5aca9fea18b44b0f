import type { Readable } from 'node:stream';
import type { EventStream } from '@nvcf/queue';
import { InferenceConnectionError } from './inference-call.ts';
import { createSseParser } from './sse-parser.ts';

/** How often a relay asks whether the client went away (one Redis read each, only while relaying). */
const CANCEL_CHECK_MS = 250;

/**
 * Relays a server's `text/event-stream` answer to the request's event stream as its events arrive (NVCF: SSE
 * is passed through, no progress, zip or error mapping). The end is an empty last event, which the gateway
 * does not send: it only closes the client's stream. A client that left (the stream was cancelled) aborts the
 * server's request, even while the server sends nothing.
 *
 * @returns 'cancelled' when the client went away first.
 */
export async function relayEvents(
  body: Readable,
  requestId: string,
  events: EventStream,
  abort: AbortController,
): Promise<'done' | 'cancelled'> {
  const parser = createSseParser();
  let cancelled = false;
  const watch = setInterval(() => {
    events
      .isCancelled(requestId)
      .then((yes) => {
        if (!yes || abort.signal.aborted) return;
        cancelled = true;
        abort.abort(new Error('the client went away'));
        body.destroy();
      })
      .catch(() => undefined);
  }, CANCEL_CHECK_MS);
  try {
    for await (const chunk of body) {
      const batch = parser.push(chunk as Buffer);
      if (batch.length > 0)
        await events.append(
          requestId,
          batch.map((data) => ({ data })),
        );
    }
  } catch (err) {
    if (cancelled) return 'cancelled';
    if (abort.signal.aborted) throw err;
    throw new InferenceConnectionError((err as Error).message, true, { cause: err });
  } finally {
    clearInterval(watch);
  }
  if (cancelled) return 'cancelled';
  const rest = parser.end();
  await events.append(requestId, [...rest.map((data) => ({ data })), { data: '', last: true }]);
  return 'done';
}
