import { AppError, PROBLEM_CONTENT_TYPE, problem } from '@nvcf/protocol';
import { isRedisOutOfMemory, isRedisUnavailable } from '@nvcf/queue';

/** Serialises a problem+json response. Every gateway error leaves through here. */
export function problemResponse(
  status: number,
  detail: string,
  opts: { instance?: string; requestId?: string; headers?: Record<string, string> } = {},
): Response {
  const body = problem(status, detail, { instance: opts.instance, requestId: opts.requestId });
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, ...opts.headers };
  if (opts.requestId) headers['nvcf-reqid'] = opts.requestId;
  return new Response(JSON.stringify(body), { status, headers });
}

/** Maps anything thrown by a handler to problem+json; unknown errors are 500 and logged by the caller. */
export function errorToProblem(err: unknown, instance: string): { response: Response; internal: boolean } {
  if (err instanceof AppError) {
    const headers: Record<string, string> = {};
    if (err.code === 'UNAUTHENTICATED') headers['www-authenticate'] = 'Bearer';
    // The rest of an oversized body is never read: the connection cannot carry another request.
    if (err.code === 'PAYLOAD_TOO_LARGE') headers.connection = 'close';
    if (err.retryAfterSeconds !== undefined)
      headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
    return { response: problemResponse(err.httpStatus, err.message, { instance, headers }), internal: false };
  }
  if (isRedisUnavailable(err)) {
    // Nothing was lost: whatever was accepted before is in Redis; this call can simply be made again.
    const { detail, retryAfterSeconds } = redisTrouble(err);
    const headers = { 'retry-after': String(retryAfterSeconds) };
    return { response: problemResponse(503, detail, { instance, headers }), internal: false };
  }
  return { response: problemResponse(500, 'Internal error', { instance }), internal: true };
}

/**
 * What a caller is told when Redis cannot take the call: unreachable or stalled (back within a second or so), or
 * full (`maxmemory` with `noeviction`: space returns as queued work is run and records expire, not at once).
 */
export function redisTrouble(err: unknown): { detail: string; retryAfterSeconds: number } {
  return isRedisOutOfMemory(err)
    ? { detail: 'the request store (Redis) is full; try again later', retryAfterSeconds: 5 }
    : { detail: 'the request store (Redis) is unreachable or not answering; try again shortly', retryAfterSeconds: 1 };
}
