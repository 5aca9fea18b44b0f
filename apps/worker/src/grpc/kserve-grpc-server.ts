import { Server } from '@grpc/grpc-js';
import { loadKserveProtos, MAX_MESSAGE_BYTES, serveGrpc } from '@nvcf/kserve-grpc';
import { tritonV1GrpcDefinition } from '../grpc-v1/v1-grpc-definition.ts';
import { createTritonV1GrpcService } from '../grpc-v1/v1-grpc-service.ts';
import type { InferenceCore } from '../inference-server/core-types.ts';
import type { TritonV1Options } from '../triton-v1/triton-v1-service.ts';
import { createHealthService } from './health-service.ts';
import { createKserveGrpcService, type KserveGrpcServiceOptions } from './kserve-grpc-service.ts';

export interface KserveGrpcServerOptions
  extends KserveGrpcServiceOptions,
    Pick<TritonV1Options, 'strictReadiness' | 'serverId'> {
  host: string;
  /** 0 picks a free port. Triton's default is 8001. */
  port: number;
  /** How long close() waits for calls in progress before cutting them off. Default 5 s. */
  shutdownGraceMs?: number;
}

export interface KserveGrpcServer {
  /** The bound port (the chosen one when 0 was asked for). */
  port: number;
  /** Stops accepting calls, lets running ones finish (up to the grace period), then cuts the rest. */
  close(): Promise<void>;
}

/**
 * Serves `inference.GRPCInferenceService` and `grpc.health.v1.Health` over plaintext HTTP/2 with
 * Triton's message limits (INT32_MAX both ways). The core is the caller's: close() leaves it running.
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
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
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
