/** An RFC 9457 problem document, as the gateway answers every error. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  requestId?: string;
  [extension: string]: unknown;
}

/**
 * An error answer from the gateway (or the function), thrown with what the problem document says: `status`, `title`,
 * `detail`, and the request's id when one was assigned (the `NVCF-REQID` header or the document's `requestId`).
 * `retryAfterSeconds` is the server's `Retry-After`, when it sent one.
 */
export class NvcfError extends Error {
  override readonly name = 'NvcfError';
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly type: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly problem: Problem;

  constructor(status: number, problem: Problem, opts: { requestId?: string; retryAfterSeconds?: number } = {}) {
    const title = problem.title ?? `HTTP ${status}`;
    const detail = problem.detail ?? '';
    super(detail ? `${status} ${title}: ${detail}` : `${status} ${title}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.type = problem.type;
    this.requestId = opts.requestId ?? (typeof problem.requestId === 'string' ? problem.requestId : undefined);
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.problem = problem;
  }

  /** A client error (4xx): the same call will fail again. */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500;
  }
}

/** The connection failed or dropped before an answer, after every retry the call allowed. */
export class NvcfConnectionError extends Error {
  override readonly name = 'NvcfConnectionError';
}

/**
 * The error a response stands for: its problem+json (or `{"error"}` / plain text, said as the detail), with the
 * request id from `NVCF-REQID` and the seconds of `Retry-After` (a number or an HTTP date).
 */
export async function errorFromResponse(res: Response): Promise<NvcfError> {
  const text = await res.text().catch(() => '');
  let problem: Problem = { title: res.statusText || `HTTP ${res.status}` };
  if (text) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        const doc = parsed as Record<string, unknown>;
        problem =
          typeof doc.error === 'string' && doc.title === undefined
            ? { ...problem, detail: doc.error }
            : (doc as Problem);
      } else problem = { ...problem, detail: text };
    } catch {
      problem = { ...problem, detail: text };
    }
  }
  const requestId = res.headers.get('nvcf-reqid') ?? undefined;
  const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'));
  return new NvcfError(res.status, problem, {
    ...(requestId ? { requestId } : {}),
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  });
}

/** `Retry-After` as seconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}
