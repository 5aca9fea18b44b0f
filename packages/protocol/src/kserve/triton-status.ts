import { AppError, type ErrorCode } from '../errors.ts';

/** The HTTP status and gRPC status code (google.rpc.Code) Triton answers for an error. */
export interface TritonStatus {
  readonly http: number;
  readonly grpc: number;
}

/**
 * Our error codes mapped once for the KServe V2 / Triton surfaces (HTTP `{"error"}` bodies and
 * gRPC), following Triton's table (Triton protocol: error codes to HTTP status): INVALID_ARG, UNKNOWN,
 * ALREADY_EXISTS and CANCELLED → 400; NOT_FOUND → 404; INTERNAL → 500; UNSUPPORTED → 501;
 * UNAVAILABLE → 503. These differ from `errorCodeInfo` (the NVCF surface) on purpose: Triton
 * clients and perf_analyzer expect Triton's statuses. For codes Triton does not have:
 * - RESOURCE_EXHAUSTED → 503 / UNAVAILABLE: Triton's "Exceeds maximum queue size" is UNAVAILABLE,
 *   and clients retry on it the same way.
 * - PAYLOAD_TOO_LARGE → 400 / RESOURCE_EXHAUSTED: Triton refuses an over-size HTTP body as
 *   INVALID_ARG (400, not 413); on gRPC, RESOURCE_EXHAUSTED is what gRPC itself answers for a
 *   message over the size limit, so both layers report "too big" alike.
 * - DEADLINE_EXCEEDED → 503 / DEADLINE_EXCEEDED: Triton has no HTTP deadline status (its queue
 *   timeout, "Request timeout expired", is UNAVAILABLE and should be thrown as such); a gRPC
 *   client whose own deadline passed expects gRPC's native code.
 * - PERMISSION_DENIED → 403 / 7 and UNAUTHENTICATED → 401 / 16: the standard statuses.
 */
export const TRITON_STATUS: Readonly<Record<ErrorCode, TritonStatus>> = {
  INVALID_ARGUMENT: { http: 400, grpc: 3 },
  NOT_FOUND: { http: 404, grpc: 5 },
  ALREADY_EXISTS: { http: 400, grpc: 6 },
  PERMISSION_DENIED: { http: 403, grpc: 7 },
  UNAUTHENTICATED: { http: 401, grpc: 16 },
  PAYLOAD_TOO_LARGE: { http: 400, grpc: 8 },
  RESOURCE_EXHAUSTED: { http: 503, grpc: 14 },
  UNPROCESSABLE: { http: 400, grpc: 9 },
  UNAVAILABLE: { http: 503, grpc: 14 },
  DEADLINE_EXCEEDED: { http: 503, grpc: 4 },
  CANCELLED: { http: 400, grpc: 1 },
  UNIMPLEMENTED: { http: 501, grpc: 12 },
  INTERNAL: { http: 500, grpc: 13 },
};

/** The HTTP status a KServe V2 / Triton route answers for `code`. */
export function tritonHttpStatus(code: ErrorCode): number {
  return TRITON_STATUS[code].http;
}

/** The gRPC status code `inference.GRPCInferenceService` answers for `code`. */
export function tritonGrpcStatus(code: ErrorCode): number {
  return TRITON_STATUS[code].grpc;
}

/**
 * What a Triton surface answers for anything thrown: an AppError keeps its code and message;
 * anything else is INTERNAL with its message.
 *
 * @example
 * const { http, message } = tritonErrorOf(err);
 * return c.json({ error: message }, http);
 */
export function tritonErrorOf(err: unknown): TritonStatus & { code: ErrorCode; message: string } {
  const code: ErrorCode = err instanceof AppError ? err.code : 'INTERNAL';
  const message = err instanceof Error ? err.message : String(err);
  return { code, message, ...TRITON_STATUS[code] };
}

/**
 * Triton's text for a model name it does not know; clients match the `Request for unknown model`
 * prefix (Triton core: its error texts).
 *
 * @example
 * unknownModelMessage('resnet'); // "Request for unknown model: 'resnet' is not found"
 */
export function unknownModelMessage(model: string): string {
  return `Request for unknown model: '${model}' is not found`;
}

/**
 * Triton's text for a known model whose requested version is not ready.
 *
 * @example
 * versionNotReadyMessage('simple', 2); // "Request for unknown model: 'simple' version 2 is not at ready state"
 */
export function versionNotReadyMessage(model: string, version: string | number): string {
  return `Request for unknown model: '${model}' version ${version} is not at ready state`;
}

/** The error for an unknown model: INVALID_ARGUMENT (→ 400), as Triton answers it. */
export function unknownModelError(model: string): AppError {
  return new AppError('INVALID_ARGUMENT', unknownModelMessage(model));
}

/** The error for a known model whose version is not ready: UNAVAILABLE (→ 503), as Triton answers it. */
export function versionNotReadyError(model: string, version: string | number): AppError {
  return new AppError('UNAVAILABLE', versionNotReadyMessage(model, version));
}
