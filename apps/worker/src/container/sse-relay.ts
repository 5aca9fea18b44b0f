import type { Readable } from 'node:stream';
import type { EventStream } from '@nvcf/queue';
import { InferenceConnectionError } from './inference-call.ts';
import type { SharedTicker } from './shared-ticker.ts';
import { createSseParser } from './sse-parser.ts';

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
  ticker: SharedTicker,
): Promise<'done' | 'cancelled'> {
  const parser = createSseParser();
  let cancelled = false;
  // One Redis read per tick, only while relaying.
  const unwatch = ticker.every(async () => {
    if (!(await events.isCancelled(requestId)) || abort.signal.aborted) return;
    cancelled = true;
    abort.abort(new Error('the client went away'));
    body.destroy();
  });
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
    await unwatch();
  }
  if (cancelled) return 'cancelled';
  const rest = parser.end();
  await events.append(requestId, [...rest.map((data) => ({ data })), { data: '', last: true }]);
  return 'done';
}
