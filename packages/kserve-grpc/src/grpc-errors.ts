import type { ServerErrorResponse } from '@grpc/grpc-js';
import { AppError, type ErrorCode, tritonGrpcStatus } from '@nvcf/protocol';

/** How an AppError's code becomes a gRPC status code (google.rpc.Code). */
export type GrpcCodeOf = (code: ErrorCode) => number;

/**
 * Any thrown value as the gRPC status the client sees: an AppError keeps its message (the text the
 * HTTP surface puts in `{"error"}`) with its gRPC code (by default Triton's, triton-status.ts); anything
 * else is a bug, answered INTERNAL with a fixed text (as the HTTP surface does) and logged by the caller.
 */
export function toGrpcError(err: unknown, codeOf: GrpcCodeOf = tritonGrpcStatus): ServerErrorResponse {
  if (err instanceof AppError) return grpcError(codeOf(err.code), err.message);
  return grpcError(13, 'Internal error');
}

/** A gRPC status as grpc-js handlers hand it to their callback (or emit it on a stream). */
export function grpcError(code: number, details: string): ServerErrorResponse {
  return Object.assign(new Error(details), { code, details });
}

/** Whether the error is the server's fault (worth a log line) rather than the client's. */
export function isServerFault(err: unknown): boolean {
  return !(err instanceof AppError) || err.code === 'INTERNAL';
}
