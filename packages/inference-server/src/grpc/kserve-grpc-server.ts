import { Server } from '@grpc/grpc-js';
import { DEFAULT_MAX_RECEIVE_BYTES, loadKserveProtos, MAX_MESSAGE_BYTES, serveGrpc } from '@nvcf/kserve-grpc';
import type { RestrictedApis } from '../access/restricted-apis.ts';
import type { InferenceCore } from '../core/core-types.ts';
import { tritonV1GrpcDefinition } from '../grpc-v1/v1-grpc-definition.ts';
import { createTritonV1GrpcService } from '../grpc-v1/v1-grpc-service.ts';
import type { TritonV1Options } from '../triton-v1/triton-v1-service.ts';
import { createHealthService } from './health-service.ts';
import { createKserveGrpcService, type KserveGrpcServiceOptions } from './kserve-grpc-service.ts';
import { restrictedApiInterceptor } from './restricted-api-interceptor.ts';

export interface KserveGrpcServerOptions
  extends KserveGrpcServiceOptions,
    Pick<TritonV1Options, 'strictReadiness' | 'serverId'> {
  host: string;
  /** 0 picks a free port. Triton's default is 8001. */
  port: number;
  /** How long close() waits for calls in progress before cutting them off. Default 5 s. */
  shutdownGraceMs?: number;
  /** Largest message a call may send; larger ones end RESOURCE_EXHAUSTED. Default 64 MiB. */
  maxReceiveBytes?: number;
  /** Triton's `--grpc-restricted-protocol`: groups that need `triton-grpc-protocol-<key>` metadata. */
  restrictedApis?: RestrictedApis;
}

export interface KserveGrpcServer {
  /** The bound port (the chosen one when 0 was asked for). */
  port: number;
  /** Stops accepting calls, lets running ones finish (up to the grace period), then cuts the rest. */
  close(): Promise<void>;
}

/**
 * Serves `inference.GRPCInferenceService` and `grpc.health.v1.Health` over plaintext HTTP/2. Answers may be
 * as large as Triton's (INT32_MAX); requests are bounded by `maxReceiveBytes`. Every RPC serves the core as
 * given, load and unload included: a caller that must narrow what the network sees hands in a core that does.
 * The core is the caller's: close() leaves it running.
 *
 * @example
 * const grpc = await startKserveGrpcServer(core, { host: '0.0.0.0', port: 8001, logger });
 * onShutdownSignal(logger, () => grpc.close());
 */
export async function startKserveGrpcServer(
  core: InferenceCore,
  opts: KserveGrpcServerOptions,
): Promise<KserveGrpcServer> {
  const protos = loadKserveProtos();
  const server = new Server({
    'grpc.max_receive_message_length': opts.maxReceiveBytes ?? DEFAULT_MAX_RECEIVE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    ...(opts.restrictedApis?.size ? { interceptors: [restrictedApiInterceptor(opts.restrictedApis)] } : {}),
  });
  server.addService(protos.inference, createKserveGrpcService(core, opts));
  server.addService(protos.health, createHealthService(core));
  // The legacy Triton v1 service (nvidia.inferenceserver.GRPCService) on the same port, as Triton v1 did.
  server.addService(
    tritonV1GrpcDefinition(),
    createTritonV1GrpcService(core, {
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.maxElements !== undefined ? { maxElements: opts.maxElements } : {}),
      ...(opts.strictReadiness !== undefined ? { strictReadiness: opts.strictReadiness } : {}),
      ...(opts.serverId !== undefined ? { serverId: opts.serverId } : {}),
    }),
  );
  const serving = await serveGrpc(server, opts);
  return serving;
}
