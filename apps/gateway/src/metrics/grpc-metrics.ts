import { ResponderBuilder, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import type { GatewayMetrics } from './gateway-metrics.ts';

/** gRPC status codes by number, under their canonical names (OK, UNAUTHENTICATED, RESOURCE_EXHAUSTED…). */
const CODE_NAMES = new Map<number, string>(
  Object.entries(status).flatMap(([name, code]) => (typeof code === 'number' ? [[code, name] as const] : [])),
);

/**
 * Counts every gRPC call by method and the status it ended with, the gRPC side of the HTTP responses counter:
 * UNAUTHENTICATED, PERMISSION_DENIED and RESOURCE_EXHAUSTED are gRPC's 401, 403 and 429. It must sit inside
 * the call authorizer (before it in the server's `interceptors`: grpc-js wraps them in order, the last
 * outermost), so that a call the authorizer refuses on its metadata is counted too.
 */
export function grpcMetricsInterceptor(metrics: GatewayMetrics): ServerInterceptor {
  return (method, call) => {
    // '/inference.GRPCInferenceService/ModelInfer' → 'ModelInfer': the service is one of two, the method names it.
    const name = method.path.slice(method.path.lastIndexOf('/') + 1);
    let counted = false;
    const responder = new ResponderBuilder()
      .withSendStatus((sent, next) => {
        if (!counted) {
          counted = true;
          metrics.grpcResponses.inc({ method: name, code: CODE_NAMES.get(sent.code) ?? String(sent.code) });
        }
        next(sent);
      })
      .build();
    return new ServerInterceptingCall(call, responder);
  };
}
