import { unzip } from 'fflate';
import { answered, cancelAbandoned } from './cancel.ts';
import { NvcfError } from './errors.ts';
import type { Transport } from './transport.ts';

/** The longest window NVCF allows for one long poll (`NVCF-POLL-SECONDS`). */
export const MAX_POLL_SECONDS = 3600;

export interface InvokeOptions {
  /** A version of the function; default the function's deployed one. */
  versionId?: string;
  /** Seconds the gateway holds each call open before answering 202 (`NVCF-POLL-SECONDS`, 1–3600; default 60). */
  pollSeconds?: number;
  /**
   * Stops the call: it rejects with the signal's reason once the request it started is cancelled on the gateway
   * (`DELETE /v2/nvcf/pexec/status/{reqId}`, best effort, at most a few seconds), so an aborted call stops using the
   * function.
   */
  signal?: AbortSignal;
  /** Called on each 202 with how far the function got and its latest partial response, if it reported one. */
  onProgress?: (progress: Progress) => void;
  /**
   * `Idempotency-Key`: a retried invocation with the same key is the same request, never a second one. Default: a
   * fresh key per call, so the client's own retries are safe; `false` sends none.
   */
  idempotencyKey?: string | false;
  /** Asset ids the function reads its input from (`NVCF-INPUT-ASSET-REFERENCES`). */
  assetIds?: string[];
  /** Content type of a bytes body (default `application/octet-stream`; a JSON body is always `application/json`). */
  contentType?: string;
  /** More request headers (forwarded to the function as NVCF forwards them). */
  headers?: Record<string, string>;
}

export interface Progress {
  requestId: string;
  /** `NVCF-PERCENT-COMPLETE`. */
  percent: number;
  /** The function's latest partial response. */
  partial?: Uint8Array;
}

/** A function's answer. */
export interface InvokeResult {
  requestId: string;
  status: number;
  /** Content type of the answer; `application/octet-stream` for one fetched from a result zip. */
  contentType: string;
  body: Uint8Array;
  /**
   * The answer's response headers, names in lower case (e.g. `inference-header-content-length`); for an answer from
   * a result zip, those of the gateway's 302.
   */
  headers: Record<string, string>;
  /** True when the answer was over the gateway's direct limit and came from the zip its 302 pointed to. */
  fromLargeResult: boolean;
  text(): string;
  json<T = unknown>(): T;
}

const decoder = new TextDecoder();

function result(
  requestId: string,
  status: number,
  contentType: string,
  body: Uint8Array,
  fromLargeResult: boolean,
  headers: Headers,
): InvokeResult {
  const plain: Record<string, string> = {};
  headers.forEach((value, name) => {
    plain[name] = value;
  });
  return {
    requestId,
    status,
    contentType,
    body,
    headers: plain,
    fromLargeResult,
    text: () => decoder.decode(body),
    json: <T>() => JSON.parse(decoder.decode(body)) as T,
  };
}

/** The `<requestId>.response` inside a result zip (NVCF's large-result layout). */
async function responseInZip(zip: Uint8Array, requestId: string): Promise<Uint8Array> {
  const files = await new Promise<Record<string, Uint8Array>>((resolve, reject) => {
    unzip(zip, (err, out) => (err ? reject(err) : resolve(out)));
  });
  const name = `${requestId}.response`;
  const entry = files[name] ?? Object.entries(files).find(([n]) => n.endsWith('.response'))?.[1];
  if (!entry) {
    throw new NvcfError(502, { title: 'Bad Gateway', detail: `the result zip holds no ${name}` }, { requestId });
  }
  return entry;
}

function checkPollSeconds(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_POLL_SECONDS) {
    throw new RangeError(`pollSeconds must be an integer from 1 to ${MAX_POLL_SECONDS}, got ${seconds}`);
  }
  return seconds;
}

/**
 * Invokes a function as NVCF's rules say: one long poll (`NVCF-POLL-SECONDS`), then, while it answers 202, long
 * polls of `/v2/nvcf/pexec/status/{NVCF-REQID}` — each one held by the gateway for the window, so the client never
 * spins — until the answer: a 200 (its body), a 302 (the zip it points to is fetched and its `<reqId>.response`
 * returned) or an error (thrown as NvcfError with the request id). 429 and 503 are retried after `Retry-After`;
 * a connection dropped mid-poll polls again; the invocation itself carries an `Idempotency-Key`, so sending it again
 * after a drop cannot start a second request. Aborting `signal` cancels the request on the gateway.
 */
export async function invokeFunction(
  transport: Transport,
  functionId: string,
  body: unknown,
  opts: InvokeOptions = {},
): Promise<InvokeResult> {
  const poll = String(checkPollSeconds(opts.pollSeconds ?? 60));
  const bytes = body instanceof Uint8Array;
  const key = opts.idempotencyKey === false ? undefined : (opts.idempotencyKey ?? crypto.randomUUID());
  const headers: Record<string, string> = {
    ...opts.headers,
    'content-type': bytes ? (opts.contentType ?? 'application/octet-stream') : 'application/json',
    'nvcf-poll-seconds': poll,
    ...(key ? { 'idempotency-key': key } : {}),
    ...(opts.assetIds?.length ? { 'nvcf-input-asset-references': opts.assetIds.join(',') } : {}),
  };
  const path = `/v2/nvcf/pexec/functions/${encodeURIComponent(functionId)}${
    opts.versionId ? `/versions/${encodeURIComponent(opts.versionId)}` : ''
  }`;
  const payload = bytes ? new Uint8Array(body) : JSON.stringify(body);
  // Known from the first 202 on: what an abort cancels.
  let pending: string | undefined;
  try {
    return await pollUntilAnswered(
      transport,
      await transport.send('POST', path, {
        headers,
        body: payload,
        idempotent: key !== undefined,
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
      poll,
      opts,
      (requestId) => {
        pending = requestId;
      },
    );
  } catch (err) {
    if (opts.signal?.aborted) {
      await cancelAbandoned(transport, {
        ...(pending ? { requestId: pending } : {}),
        // Aborted during the first long poll: the same call again names the request (its Idempotency-Key).
        ...(key
          ? {
              resend: ({ signal }) =>
                transport.send('POST', path, {
                  headers: { ...headers, 'nvcf-poll-seconds': '1' },
                  body: payload,
                  idempotent: true,
                  signal,
                  accept: answered,
                }),
            }
          : {}),
      });
    }
    throw err;
  }
}

/** Follows an invocation's answer: 202s polled on the status route until the answer (200, 302 or an error). */
async function pollUntilAnswered(
  transport: Transport,
  first: Response,
  poll: string,
  opts: InvokeOptions,
  accepted: (requestId: string) => void,
): Promise<InvokeResult> {
  let res = first;
  for (;;) {
    const requestId = res.headers.get('nvcf-reqid') ?? '';
    if (res.status === 302) {
      const location = res.headers.get('location');
      await res.body?.cancel();
      if (!location)
        throw new NvcfError(502, { title: 'Bad Gateway', detail: 'a 302 without Location' }, { requestId });
      const zipped = await transport.send('GET', new URL(location, transport.baseUrl).toString(), {
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const zip = new Uint8Array(await zipped.arrayBuffer());
      return result(requestId, 200, 'application/octet-stream', await responseInZip(zip, requestId), true, res.headers);
    }
    if (res.status !== 202) {
      const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
      return result(requestId, res.status, contentType, new Uint8Array(await res.arrayBuffer()), false, res.headers);
    }
    const partial = new Uint8Array(await res.arrayBuffer());
    if (!requestId) throw new NvcfError(502, { title: 'Bad Gateway', detail: 'a 202 without NVCF-REQID' });
    accepted(requestId);
    opts.onProgress?.({
      requestId,
      percent: Number(res.headers.get('nvcf-percent-complete') ?? 0),
      ...(partial.length > 0 ? { partial } : {}),
    });
    res = await transport.send('GET', `/v2/nvcf/pexec/status/${encodeURIComponent(requestId)}`, {
      headers: { 'nvcf-poll-seconds': poll },
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  }
}
