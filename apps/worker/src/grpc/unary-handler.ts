import type { handleUnaryCall, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from '@nvcf/service-kit';
import { isServerFault, toGrpcError } from './grpc-errors.ts';

export type UnaryImpl<Req, Res> = (request: Req, call: ServerUnaryCall<Req, Res>) => Res | Promise<Res>;

/**
 * Adapts a function of the decoded request to a grpc-js unary handler: whatever it throws (sync or
 * async) becomes a gRPC status; nothing escapes as an unhandled rejection. Answering a call that the
 * client has cancelled or whose deadline passed is a no-op in grpc-js, so late results are harmless.
 */
export function unary<Req, Res>(method: string, impl: UnaryImpl<Req, Res>, logger?: Logger): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let result: Res | Promise<Res>;
    try {
      result = impl(call.request, call);
    } catch (err) {
      callback(fail(method, err, logger));
      return;
    }
    if (!(result instanceof Promise)) {
      callback(null, result);
      return;
    }
    result.then(
      (res) => callback(null, res),
      (err: unknown) => callback(fail(method, err, logger)),
    );
  };
}

function fail(method: string, err: unknown, logger: Logger | undefined) {
  if (isServerFault(err)) logger?.error({ err, method }, 'gRPC call failed');
  return toGrpcError(err);
}
