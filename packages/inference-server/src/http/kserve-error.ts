import { AppError, tritonHttpStatus } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { ErrorHandler } from 'hono';

/** `{"error": "<message>"}`: the only error shape of the KServe V2 surface (Open Inference Protocol REST). */
export function kserveError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/**
 * Maps anything a route throws to `{"error"}` with Triton's status for its code (triton-status.ts).
 * One exception: an over-size body is 413 with `Connection: close` rather than Triton's 400, because
 * the rest of that body is never read and the connection cannot carry another request; 413 tells a
 * client (and any proxy) that retrying the same body is pointless. Errors that are not AppErrors are
 * bugs: 500 with a fixed text, logged with the stack.
 */
export function kserveErrorHandler(logger: Logger): ErrorHandler {
  return (err, c) => {
    if (err instanceof AppError) {
      if (err.code === 'PAYLOAD_TOO_LARGE') return kserveError(413, err.message, { connection: 'close' });
      return kserveError(tritonHttpStatus(err.code), err.message);
    }
    logger.error({ err, method: c.req.method, path: c.req.path }, 'unhandled error');
    return kserveError(500, 'Internal error');
  };
}
