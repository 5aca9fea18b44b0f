/**
 * One list of error codes for every surface. Each code knows whether a retry can help and maps once to
 * HTTP and once to gRPC; the wire shape (problem+json, KServe `{"error"}`, gRPC status) is the
 * surface's business.
 */
export const ErrorCode = {
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  NOT_FOUND: 'NOT_FOUND',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  RESOURCE_EXHAUSTED: 'RESOURCE_EXHAUSTED',
  /** Well-formed, but conflicts with what the server holds (an Idempotency-Key reused for another call). */
  UNPROCESSABLE: 'UNPROCESSABLE',
  UNAVAILABLE: 'UNAVAILABLE',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  CANCELLED: 'CANCELLED',
  UNIMPLEMENTED: 'UNIMPLEMENTED',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

interface CodeInfo {
  readonly http: number;
  /** grpc status number (google.rpc.Code). */
  readonly grpc: number;
  readonly retryable: boolean;
}

export const errorCodeInfo: Readonly<Record<ErrorCode, CodeInfo>> = {
  INVALID_ARGUMENT: { http: 400, grpc: 3, retryable: false },
  NOT_FOUND: { http: 404, grpc: 5, retryable: false },
  ALREADY_EXISTS: { http: 409, grpc: 6, retryable: false },
  PERMISSION_DENIED: { http: 403, grpc: 7, retryable: false },
  UNAUTHENTICATED: { http: 401, grpc: 16, retryable: false },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: 8, retryable: false },
  RESOURCE_EXHAUSTED: { http: 429, grpc: 8, retryable: true },
  UNPROCESSABLE: { http: 422, grpc: 9, retryable: false },
  UNAVAILABLE: { http: 503, grpc: 14, retryable: true },
  DEADLINE_EXCEEDED: { http: 504, grpc: 4, retryable: true },
  CANCELLED: { http: 499, grpc: 1, retryable: false },
  UNIMPLEMENTED: { http: 501, grpc: 12, retryable: false },
  INTERNAL: { http: 500, grpc: 13, retryable: true },
};

/** HTTP statuses a function answers with, as error codes: the inverse of `errorCodeInfo`'s HTTP column. */
const BY_HTTP_STATUS: ReadonlyMap<number, ErrorCode> = new Map<number, ErrorCode>([
  [400, 'INVALID_ARGUMENT'],
  [401, 'UNAUTHENTICATED'],
  [403, 'PERMISSION_DENIED'],
  [404, 'NOT_FOUND'],
  [408, 'DEADLINE_EXCEEDED'],
  [409, 'ALREADY_EXISTS'],
  [413, 'PAYLOAD_TOO_LARGE'],
  [422, 'INVALID_ARGUMENT'],
  [429, 'RESOURCE_EXHAUSTED'],
  [499, 'CANCELLED'],
  [500, 'INTERNAL'],
  [501, 'UNIMPLEMENTED'],
  [502, 'UNAVAILABLE'],
  [503, 'UNAVAILABLE'],
  [504, 'DEADLINE_EXCEEDED'],
]);

/** The code of a function's error status: the table above, else INTERNAL (5xx) or INVALID_ARGUMENT (4xx). */
export function errorCodeOfHttpStatus(httpStatus: number): ErrorCode {
  return BY_HTTP_STATUS.get(httpStatus) ?? (httpStatus >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}

/**
 * An error that knows its code. Anything thrown that is not an AppError is treated as INTERNAL.
 *
 * @example
 * throw new AppError('INVALID_ARGUMENT', "input 'INPUT0': expected 16 elements, got 15");
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** For RESOURCE_EXHAUSTED/UNAVAILABLE: when trying again makes sense (HTTP `Retry-After`). */
  readonly retryAfterSeconds?: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
  get httpStatus(): number {
    return errorCodeInfo[this.code].http;
  }
  get retryable(): boolean {
    return errorCodeInfo[this.code].retryable;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** Shorthand for the most common case: the caller sent something we cannot accept. */
export function invalidArgument(message: string): AppError {
  return new AppError('INVALID_ARGUMENT', message);
}
