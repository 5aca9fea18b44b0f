import { Metadata, type ServerErrorResponse } from '@grpc/grpc-js';
import { grpcError, toGrpcError } from '@nvcf/kserve-grpc';
import { AppError, type ErrorCode, errorCodeInfo, NvcfHeader } from '@nvcf/protocol';
import { isRedisUnavailable } from '@nvcf/queue';
import { redisTrouble } from '../http/problem-response.ts';
import { RelayedFunctionError } from '../invocation/relayed-problem.ts';

/** The gateway's own errors take NVCF's gRPC codes (errors.ts), e.g. RESOURCE_EXHAUSTED for a full queue. */
export const gatewayGrpcCode = (code: ErrorCode): number => errorCodeInfo[code].grpc;

/**
 * Anything a gateway handler threw as the status sent: an AppError keeps its message and maps through
 * `gatewayGrpcCode`, with `retry-after` in the trailers when it says when to try again (queue full,
 * rate limit) and, for a function's failure, its problem+json and request id; anything else is
 * INTERNAL with a fixed text.
 */
export function toGatewayGrpcError(err: unknown): ServerErrorResponse {
  // Redis away, stalled or full: try again (HTTP callers get 503 + Retry-After for the same).
  if (isRedisUnavailable(err)) {
    const { detail, retryAfterSeconds } = redisTrouble(err);
    const out = grpcError(14, detail);
    const metadata = new Metadata();
    metadata.set('retry-after', String(retryAfterSeconds));
    out.metadata = metadata;
    return out;
  }
  const out = toGrpcError(err, gatewayGrpcCode);
  if (err instanceof RelayedFunctionError) {
    const metadata = new Metadata();
    metadata.set(NvcfHeader.REQID, err.requestId);
    metadata.set('nvcf-problem-details-bin', err.problem);
    out.metadata = metadata;
  }
  const retryAfter = err instanceof AppError ? (err as { retryAfterSeconds?: unknown }).retryAfterSeconds : undefined;
  if (typeof retryAfter === 'number') {
    const metadata = new Metadata();
    metadata.set('retry-after', String(retryAfter));
    out.metadata = metadata;
  }
  return out;
}
