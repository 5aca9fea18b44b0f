import { EventSourceParserStream } from 'eventsource-parser/stream';
import { answered, cancelAbandoned } from './cancel.ts';
import { NvcfConnectionError, NvcfError, type Problem } from './errors.ts';
import type { InvokeOptions } from './invoke.ts';
import { sleep, type Transport } from './transport.ts';

/** One server-sent event of a function's stream. */
export interface StreamEvent {
  /** The event's id (what `Last-Event-ID` resumes after). */
  id?: string;
  /** `undefined` for an ordinary event. */
  event?: string;
  data: string;
}

export type StreamOptions = Omit<InvokeOptions, 'onProgress'> & {
  /** Reconnections allowed after the connection drops mid-stream (default 5). */
  reconnects?: number;
};

/** The error an `event: error` carries (problem+json, or its text as the detail). */
function streamError(data: string, requestId: string): NvcfError {
  try {
    const problem = JSON.parse(data) as Problem & { error?: string };
    const status = typeof problem.status === 'number' ? problem.status : 500;
    const doc = problem.title === undefined && typeof problem.error === 'string' ? { detail: problem.error } : problem;
    return new NvcfError(status, { title: 'Stream error', ...doc }, { requestId });
  } catch {
    return new NvcfError(500, { title: 'Stream error', detail: data }, { requestId });
  }
}

const isSse = (res: Response) => (res.headers.get('content-type') ?? '').startsWith('text/event-stream');

/**
 * Invokes a function and iterates over its server-sent events as they come (NVCF's `Accept: text/event-stream`).
 * A window that closes before the first event (202) is followed on `/v2/nvcf/pexec/status/{reqId}`; a connection
 * that drops mid-stream is resumed there with `Last-Event-ID`, so no event is lost or repeated; a function that
 * answers once is one event. An `event: error` is thrown as NvcfError after the events before it. Leaving the loop
 * early (`break`, or aborting the signal) cancels the request on the gateway (`DELETE /v2/nvcf/pexec/status/{reqId}`,
 * best effort), which stops a generating function at once.
 *
 * @example
 * for await (const e of client.stream(fid, { messages: [{ role: 'user', content: 'Hi' }] })) console.log(e.data);
 */
export async function* streamFunction(
  transport: Transport,
  functionId: string,
  body: unknown,
  opts: StreamOptions = {},
): AsyncGenerator<StreamEvent, void, undefined> {
  const call = prepare(functionId, body, opts);
  const started: { requestId?: string } = {};
  // Whether the request is over for the caller: its stream ended, or failed on its own (not by an abort).
  let over = false;
  try {
    for await (const event of events(transport, call, opts, started)) {
      // OpenAI's terminator: a caller that stops there (the usual `break`) left nothing running.
      if (event.data === '[DONE]') over = true;
      yield event;
    }
    over = true;
  } catch (err) {
    over = !opts.signal?.aborted;
    throw err;
  } finally {
    // Left early (`break`, `return()`) or aborted: the request would otherwise run on until its stream's grace ends.
    if (!over) {
      await cancelAbandoned(transport, {
        ...(started.requestId ? { requestId: started.requestId } : {}),
        ...(call.key
          ? {
              resend: ({ signal }) =>
                transport.send('POST', call.path, {
                  headers: { ...call.headers, accept: 'application/json', 'nvcf-poll-seconds': '1' },
                  body: call.payload,
                  idempotent: true,
                  signal,
                  accept: answered,
                }),
            }
          : {}),
      });
    }
  }
}

interface PreparedCall {
  path: string;
  headers: Record<string, string>;
  payload: Uint8Array<ArrayBuffer> | string;
  key: string | undefined;
  poll: string;
}

function prepare(functionId: string, body: unknown, opts: StreamOptions): PreparedCall {
  const poll = String(opts.pollSeconds ?? 60);
  const bytes = body instanceof Uint8Array;
  const key = opts.idempotencyKey === false ? undefined : (opts.idempotencyKey ?? crypto.randomUUID());
  const path = `/v2/nvcf/pexec/functions/${encodeURIComponent(functionId)}${
    opts.versionId ? `/versions/${encodeURIComponent(opts.versionId)}` : ''
  }`;
  const headers = {
    ...opts.headers,
    accept: 'text/event-stream',
    'content-type': bytes ? (opts.contentType ?? 'application/octet-stream') : 'application/json',
    'nvcf-poll-seconds': poll,
    ...(key ? { 'idempotency-key': key } : {}),
    ...(opts.assetIds?.length ? { 'nvcf-input-asset-references': opts.assetIds.join(',') } : {}),
  };
  return { path, headers, payload: bytes ? new Uint8Array(body) : JSON.stringify(body), key, poll };
}

async function* events(
  transport: Transport,
  call: PreparedCall,
  opts: StreamOptions,
  started: { requestId?: string },
): AsyncGenerator<StreamEvent, void, undefined> {
  const { poll } = call;
  const signal = opts.signal;
  let res = await transport.send('POST', call.path, {
    headers: call.headers,
    body: call.payload,
    idempotent: call.key !== undefined,
    ...(signal ? { signal } : {}),
  });
  const requestId = res.headers.get('nvcf-reqid') ?? '';
  if (requestId) started.requestId = requestId;
  let lastId: string | undefined;
  let reconnects = 0;
  const follow = () =>
    transport.send('GET', `/v2/nvcf/pexec/status/${encodeURIComponent(requestId)}`, {
      headers: {
        accept: 'text/event-stream',
        'nvcf-poll-seconds': poll,
        ...(lastId ? { 'last-event-id': lastId } : {}),
      },
      ...(signal ? { signal } : {}),
    });
  for (;;) {
    if (res.status === 202) {
      await res.body?.cancel();
      res = await follow();
      continue;
    }
    if (!isSse(res)) {
      // A function that answered once (or a 302 to a large result, which a stream cannot carry).
      if (res.status === 302) {
        await res.body?.cancel();
        throw new NvcfError(
          406,
          { title: 'Not Acceptable', detail: 'the answer is a large result behind a 302: use invoke() to fetch it' },
          { requestId },
        );
      }
      const data = await res.text();
      yield { data };
      return;
    }
    const events = res.body
      ?.pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    if (!events) return;
    try {
      for (;;) {
        const { done, value } = await events.read();
        if (done) return;
        if (value.id) lastId = value.id;
        if (value.event === 'error') throw streamError(value.data, requestId);
        yield {
          data: value.data,
          ...(value.id ? { id: value.id } : {}),
          ...(value.event ? { event: value.event } : {}),
        };
      }
    } catch (err) {
      if (err instanceof NvcfError || signal?.aborted) throw err;
      // The connection dropped mid-stream: resume after the last event seen.
      if (!requestId || reconnects >= (opts.reconnects ?? 5)) {
        throw new NvcfConnectionError(`the event stream of ${requestId || 'the request'} dropped`, { cause: err });
      }
      reconnects++;
      await sleep(transport.backoff(reconnects), signal);
      res = await follow();
    } finally {
      // Leaving early closes the connection (the function stops generating).
      await events.cancel().catch(() => undefined);
    }
  }
}
