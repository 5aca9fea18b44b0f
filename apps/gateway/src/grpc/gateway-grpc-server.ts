import { Server, type ServerInterceptor, type UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  type HealthCheckRequestMsg,
  loadKserveProtos,
  MAX_MESSAGE_BYTES,
  passEncodedResponses,
  serveGrpc,
  unary,
} from '@nvcf/kserve-grpc';
import { AppError } from '@nvcf/protocol';
import { createCallAuthorizer } from './call-authorizer.ts';
import {
  createGatewayGrpcService,
  type GatewayGrpcDeps,
  type GatewayGrpcServiceOptions,
} from './gateway-grpc-service.ts';
import { toGatewayGrpcError } from './grpc-status.ts';

export interface GatewayGrpcServerOptions extends GatewayGrpcServiceOptions {
  host: string;
  /** 0 picks a free port. The gateway's default is 8081 (GATEWAY_GRPC_PORT). */
  port: number;
  /** How long close() waits for calls in progress before cutting them off. Default 5 s. */
  shutdownGraceMs?: number;
  /** Idle connections are closed after this long (NVCF keeps them 30 s; NVCF API: gRPC invocation). Default 30 s. */
  idleTimeoutMs?: number;
  /** Interceptors that see every call, refused ones included (they run inside the call authorizer): metrics. */
  observers?: ServerInterceptor[];
}

export interface GatewayGrpcServer {
  /** The bound port (the chosen one when 0 was asked for). */
  port: number;
  /** Stops accepting calls, lets running ones finish (up to the grace period), then cuts the rest. */
  close(): Promise<void>;
}

/**
 * Room above MAX_REQUEST_BODY_BYTES for what a ModelInferRequest carries besides its tensor bytes: names,
 * datatypes, shapes, parameters, and each field's tag and length. Raw contents that fit the body limit
 * fit the message; the queued body is checked against the limit itself (model-infer-bridge.ts).
 */
export const MESSAGE_FRAMING_ALLOWANCE_BYTES = 64 * 1024;

/** Health names answered SERVING: the port as a whole and the inference service. No credential needed. */
const SERVED = new Set(['', 'inference.GRPCInferenceService']);

/**
 * The gateway's gRPC port: `inference.GRPCInferenceService` addressed to functions by metadata
 * (gateway-grpc-service.ts) and `grpc.health.v1.Health` for load balancers, over plaintext HTTP/2.
 * Every inference call is authorized from its metadata before its message is read (call-authorizer.ts);
 * a request message over `maxBodyBytes` + MESSAGE_FRAMING_ALLOWANCE_BYTES is refused RESOURCE_EXHAUSTED by
 * grpc-js from its length prefix, before it is buffered. Answers may be as large as protobuf allows
 * (2 GiB − 1). The deps are the caller's: close() leaves them running.
 *
 * @example
 * const grpc = await startGatewayGrpcServer(
 *   { auth, functions, invocations, limiter, logger },
 *   { host: '0.0.0.0', port: 8081, maxBodyBytes: 5 * 1024 * 1024, maxElements: 1 << 26 },
 * );
 * await grpc.close();
 */
export async function startGatewayGrpcServer(
  deps: GatewayGrpcDeps,
  opts: GatewayGrpcServerOptions,
): Promise<GatewayGrpcServer> {
  const protos = loadKserveProtos();
  const authorizer = createCallAuthorizer(deps.auth, deps.logger);
  const server = new Server({
    interceptors: [...(opts.observers ?? []), authorizer.interceptor],
    'grpc.max_receive_message_length': Math.min(MAX_MESSAGE_BYTES, opts.maxBodyBytes + MESSAGE_FRAMING_ALLOWANCE_BYTES),
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_connection_idle_ms': opts.idleTimeoutMs ?? 30_000,
  });
  server.addService(passEncodedResponses(protos.inference), createGatewayGrpcService({ ...deps, authorizer }, opts));
  server.addService(protos.health, healthService());
  const serving = await serveGrpc(server, opts);
  deps.logger?.info({ port: serving.port }, 'gateway gRPC listening');
  return serving;
}

function healthService(): UntypedServiceImplementation {
  return {
    Check: unary(
      'Check',
      (req: HealthCheckRequestMsg) => {
        if (!SERVED.has(req.service)) throw new AppError('NOT_FOUND', `unknown service '${req.service}'`);
        return { status: 'SERVING' };
      },
      undefined,
      toGatewayGrpcError,
    ),
  };
}
