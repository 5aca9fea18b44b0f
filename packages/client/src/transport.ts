import { errorFromResponse, NvcfConnectionError } from './errors.ts';

export interface RetryOptions {
  /** Tries in all, the first included (default 4). */
  attempts?: number;
  /** The backoff's first ceiling; each retry doubles it (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait between tries, `Retry-After` aside (default 20 s). */
  maxDelayMs?: number;
}

export interface ClientOptions {
  /** The gateway, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An API key (or a JWT) sent as `Authorization: Bearer …`. */
  apiKey?: string;
  retry?: RetryOptions;
  /** The fetch to use (default the global one): for proxies, tests, instrumentation. */
  fetch?: typeof fetch;
}

export interface SendOptions {
  headers?: Record<string, string>;
  /**
   * Bytes, text or a Blob: kept so a retry can send them again. A ReadableStream is read once, so a call with one
   * is never sent twice (no retry after a drop, 429 or 503), whatever `idempotent` says.
   */
  body?: Uint8Array<ArrayBuffer> | string | Blob | ReadableStream<Uint8Array>;
  signal?: AbortSignal;
  /**
   * Whether sending twice is harmless, so a dropped connection may be retried: true for GET, PUT and DELETE and
   * for a call carrying an `Idempotency-Key`, false otherwise.
   */
  idempotent?: boolean;
  /** Statuses returned to the caller rather than thrown (default: every status below 400). */
  accept?: (status: number) => boolean;
}

const RETRIED_STATUSES = new Set([429, 503]);

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const isAbort = (err: unknown, signal?: AbortSignal) =>
  signal?.aborted === true || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'));

/**
 * HTTP to the gateway with NVCF's retry rules: 429 and 503 are retried after the server's `Retry-After` (or a
 * full-jitter exponential backoff when it sent none), a dropped connection only when the call is idempotent; other
 * error statuses are thrown as NvcfError carrying the problem document. Aborting the signal stops at once, waits
 * included.
 */
export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #attempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#apiKey = opts.apiKey;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#attempts = Math.max(1, opts.retry?.attempts ?? 4);
    this.#baseDelayMs = opts.retry?.baseDelayMs ?? 250;
    this.#maxDelayMs = opts.retry?.maxDelayMs ?? 20_000;
  }

  /** The wait before retry number `retry` (1-based): the server's word if it gave one, else full jitter. */
  backoff(retry: number, retryAfterSeconds?: number): number {
    if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
    const ceiling = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (retry - 1));
    return Math.random() * ceiling;
  }

  /** Sends a request to a path of the gateway (or an absolute URL, such as a signed one, without credentials). */
  async send(method: string, pathOrUrl: string, opts: SendOptions = {}): Promise<Response> {
    const absolute = /^https?:\/\//.test(pathOrUrl);
    const url = absolute ? pathOrUrl : `${this.baseUrl}${pathOrUrl}`;
    const headers: Record<string, string> = { ...opts.headers };
    if (this.#apiKey && !absolute) headers.authorization = `Bearer ${this.#apiKey}`;
    const idempotent = opts.idempotent ?? (method !== 'POST' && method !== 'PATCH');
    const accept = opts.accept ?? ((s: number) => s < 400);
    const streamed = opts.body instanceof ReadableStream;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(url, {
          method,
          headers,
          ...(opts.body !== undefined ? { body: opts.body } : {}),
          // Node's fetch sends a stream body only as a half-duplex request, and says so up front.
          ...(streamed ? { duplex: 'half' as const } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
          redirect: 'manual',
        });
      } catch (err) {
        if (isAbort(err, opts.signal)) throw opts.signal?.reason ?? err;
        if (!idempotent || streamed || attempt >= this.#attempts) {
          throw new NvcfConnectionError(`${method} ${url} failed: ${(err as Error).message}`, { cause: err });
        }
        await sleep(this.backoff(attempt), opts.signal);
        continue;
      }
      if (accept(res.status)) return res;
      const error = await errorFromResponse(res);
      if (!RETRIED_STATUSES.has(res.status) || streamed || attempt >= this.#attempts) throw error;
      await sleep(this.backoff(attempt, error.retryAfterSeconds), opts.signal);
    }
  }

  /** A JSON call: the body serialized, the answer parsed. */
  async json<T>(method: string, path: string, body?: unknown, opts: Omit<SendOptions, 'body'> = {}): Promise<T> {
    const res = await this.send(method, path, {
      ...opts,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
