import { AppError, type ErrorCode } from '@nvcf/protocol';
import type { RequestStatusCode, RequestStatusMsg } from './v1-messages.ts';

/**
 * Our error codes as v1 RequestStatusCode values (TRTIS 1.x protos: request_status.proto). Codes v1 does not
 * have fold into the nearest one a v1 client acts on: "try again later" codes into UNAVAILABLE, an over-size
 * body into INVALID_ARG (as Triton's "request too large"), auth and cancellation into UNKNOWN.
 */
export const V1_STATUS_CODE: Readonly<Record<ErrorCode, RequestStatusCode>> = {
  INVALID_ARGUMENT: 'INVALID_ARG',
  NOT_FOUND: 'NOT_FOUND',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  PERMISSION_DENIED: 'UNKNOWN',
  UNAUTHENTICATED: 'UNKNOWN',
  PAYLOAD_TOO_LARGE: 'INVALID_ARG',
  RESOURCE_EXHAUSTED: 'UNAVAILABLE',
  UNPROCESSABLE: 'INVALID_ARG',
  UNAVAILABLE: 'UNAVAILABLE',
  DEADLINE_EXCEEDED: 'UNAVAILABLE',
  CANCELLED: 'UNKNOWN',
  UNIMPLEMENTED: 'UNSUPPORTED',
  INTERNAL: 'INTERNAL',
};

/** v1 HTTP answers 200 for SUCCESS, 400 for every other code (TRTIS 1.x API); the code travels in NV-Status. */
export function v1HttpStatus(code: RequestStatusCode | undefined): 200 | 400 {
  return code === 'SUCCESS' ? 200 : 400;
}

/** Server-side faults are logged; a client's mistake is only answered. */
export function isServerFault(err: unknown): boolean {
  return !(err instanceof AppError) || err.code === 'INTERNAL';
}

/**
 * Issues RequestStatus messages: SUCCESS or an error's code and message, each with the server id and the next
 * request id (a per-server counter, as v1's).
 *
 * @example
 * const statuses = createRequestStatuses('inference:0');
 * statuses.of(); // { code: 'SUCCESS', server_id: 'inference:0', request_id: 1 }
 * statuses.of(new AppError('NOT_FOUND', 'no status available for unknown model \'foo\''));
 * // { code: 'NOT_FOUND', msg: "no status available for unknown model 'foo'", server_id: 'inference:0', request_id: 2 }
 */
export function createRequestStatuses(serverId: string): { of(err?: unknown): RequestStatusMsg } {
  let next = 1;
  return {
    of(err?: unknown): RequestStatusMsg {
      const request_id = next++;
      if (err === undefined) return { code: 'SUCCESS', server_id: serverId, request_id };
      const code = err instanceof AppError ? V1_STATUS_CODE[err.code] : 'INTERNAL';
      const msg = err instanceof AppError ? err.message : 'internal error';
      return { code, msg, server_id: serverId, request_id };
    },
  };
}
