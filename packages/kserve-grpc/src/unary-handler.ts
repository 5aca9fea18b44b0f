import type { handleUnaryCall, ServerErrorResponse, ServerUnaryCall } from '@grpc/grpc-js';
import { isServerFault, toGrpcError } from './grpc-errors.ts';

export type UnaryImpl<Req, Res> = (request: Req, call: ServerUnaryCall<Req, Res>) => Res | Promise<Res>;

/** What the handlers log (a pino Logger fits): server faults only, never a request's contents. */
export interface GrpcLogger {
  error(obj: object, msg: string): void;
}

/**
 * Adapts a function of the decoded request to a grpc-js unary handler: whatever it throws (sync or
 * async) becomes a gRPC status; nothing escapes as an unhandled rejection. Answering a call that the
 * client has cancelled or whose deadline passed is a no-op in grpc-js, so late results are harmless.
 *
 * @param toStatus turns what `impl` threw into the status sent; default `toGrpcError` (Triton's codes).
 */
export function unary<Req, Res>(
  method: string,
  impl: UnaryImpl<Req, Res>,
  logger?: GrpcLogger,
  toStatus: (err: unknown) => ServerErrorResponse = toGrpcError,
): handleUnaryCall<Req, Res> {
  const fail = (err: unknown) => {
    if (isServerFault(err)) logger?.error({ err, method }, 'gRPC call failed');
    return toStatus(err);
  };
  return (call, callback) => {
    let result: Res | Promise<Res>;
    try {
      result = impl(call.request, call);
    } catch (err) {
      callback(fail(err));
      return;
    }
    if (!(result instanceof Promise)) {
      callback(null, result);
      return;
    }
    result.then(
      (res) => callback(null, res),
      (err: unknown) => callback(fail(err)),
    );
  };
}
