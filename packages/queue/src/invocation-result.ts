import { ErrorCode, errorCodeInfo, errorCodeOfHttpStatus, PROBLEM_CONTENT_TYPE, problem } from '@nvcf/protocol';

/** The answer's bytes, and how its HTTP rendering carries them (a container's own status and headers). */
interface ResultPayload {
  /** The status an HTTP surface answers with: 200 for a model's answer, a container server's own status. */
  status: number;
  contentType: string;
  body: Buffer;
  headers?: Record<string, string>;
}

/** The function answered. */
export interface InvocationSuccess extends ResultPayload {
  ok: true;
  /**
   * A result too large to travel inline (NVCF: > 5 MiB) is kept in the object store under this key; the
   * client gets a 302 to a signed URL for it.
   */
  objectKey?: string;
}

/**
 * The function, or the platform on its behalf, failed. `code` is the one error table's (`@nvcf/protocol` errors):
 * a surface that speaks another protocol than the rendering's (the gateway's gRPC port) maps it, rather than
 * guessing it back from the HTTP status. The payload is the failure as NVCF's HTTP API shows it (problem+json).
 */
export interface InvocationFailure extends ResultPayload {
  ok: false;
  code: ErrorCode;
  /** A failure is never stored away as a large result. */
  objectKey?: never;
}

/**
 * What a request ended with, whichever surface asked and whichever runner answered: success or failure is said
 * here once, by whoever made the result, and every surface reads `ok` (and `code`) instead of an HTTP status.
 */
export type InvocationResult = InvocationSuccess | InvocationFailure;

/** A function's answer; a model's is a 200. */
export function successResult(
  payload: Omit<InvocationSuccess, 'ok' | 'status'> & { status?: number },
): InvocationSuccess {
  return { ok: true, ...payload, status: payload.status ?? 200 };
}

/** Who a failure is reported by (NVCF's problem+json `source`). */
export type FailureSource = 'inference-service' | 'inference-connection' | 'nvcf-worker-service' | 'nvcf-gateway';

/**
 * A failure rendered as NVCF renders one (problem+json, NVCF behaviour: function failures), with the code's HTTP
 * status unless `status` says otherwise (a container server's own 4xx/5xx, a cancellation's 499).
 */
export function failureResult(
  code: ErrorCode,
  detail: string,
  opts: { source: FailureSource; requestId: string; status?: number },
): InvocationFailure {
  const status = opts.status ?? errorCodeInfo[code].http;
  const body = problem(status, detail, { source: opts.source, requestId: opts.requestId });
  return { ok: false, code, status, contentType: PROBLEM_CONTENT_TYPE, body: Buffer.from(JSON.stringify(body)) };
}

const ERROR_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));
const isErrorCode = (text: string): text is ErrorCode => ERROR_CODES.has(text);

/**
 * A result as the request store keeps it (a record's fields, an inline reply's frame): a failure is stored with
 * its code (one a later release added reads by its status), a success with none. Only the previous release's workers stored some failures without a code (a
 * container server's 4xx/5xx, an unreachable server): those are told by their status, as that release did, and
 * given the table's code for it. (Drop that reading one release after this one.)
 */
export function storedResult(fields: ResultPayload & { code: string; objectKey?: string }): InvocationResult {
  const { code, objectKey, ...payload } = fields;
  if (code) return { ok: false, code: isErrorCode(code) ? code : errorCodeOfHttpStatus(payload.status), ...payload };
  if (payload.status >= 400) return { ok: false, code: errorCodeOfHttpStatus(payload.status), ...payload };
  return { ok: true, ...payload, ...(objectKey ? { objectKey } : {}) };
}

/** The code a result is stored with: '' for a success. */
export const storedCode = (result: InvocationResult): string => (result.ok ? '' : result.code);
