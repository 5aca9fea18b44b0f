import type { ServerErrorResponse } from '@grpc/grpc-js';
import { AppError, tritonGrpcStatus } from '@nvcf/protocol';

/**
 * Any thrown value as the gRPC status the client sees: an AppError keeps its message (the text the
 * HTTP surface puts in `{"error"}`) with Triton's gRPC code for it (triton-status.ts); anything else is
 * a bug, answered INTERNAL with a fixed text (as the HTTP surface does) and logged by the caller.
 */
export function toGrpcError(err: unknown): ServerErrorResponse {
  if (err instanceof AppError) return grpcError(tritonGrpcStatus(err.code), err.message);
  return grpcError(13, 'Internal error');
}

function grpcError(code: number, details: string): ServerErrorResponse {
  return Object.assign(new Error(details), { code, details });
}

/** Whether the error is the server's fault (worth a log line) rather than the client's. */
export function isServerFault(err: unknown): boolean {
  return !(err instanceof AppError) || err.code === 'INTERNAL';
}
