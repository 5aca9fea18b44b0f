import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  decodeModelInferRequest,
  encodeModelInferResponse,
  type ModelInferRequestMsg,
  type ModelInferResponseMsg,
  type NameVersionMsg,
  type RepositoryIndexRequestMsg,
  type RepositoryModelRequestMsg,
  unary,
} from '@nvcf/kserve-grpc';
import { modelConfigToJson } from '@nvcf/models';
import { AppError } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { InferenceCore } from '../core/core-types.ts';
import { modelStreamInfer } from './model-stream-infer.ts';
import { repositoryLoadOptions } from './repository-load-options.ts';

export interface KserveGrpcServiceOptions {
  logger?: Logger;
  /** Per-input element limit, checked against the shape before anything is allocated. Default 2^28. */
  maxElements?: number;
  /** ModelStreamInfer: requests of one stream that may run at once (answers stay in order). Default 16. */
  maxStreamInFlight?: number;
}

/** Declared in grpc_service.proto for stub compatibility, answered UNIMPLEMENTED. */
const UNSUPPORTED = [
  'SystemSharedMemoryStatus',
  'SystemSharedMemoryRegister',
  'SystemSharedMemoryUnregister',
  'CudaSharedMemoryStatus',
  'CudaSharedMemoryRegister',
  'CudaSharedMemoryUnregister',
  'TraceSetting',
  'LogSettings',
] as const;

const orUndefined = (s: string) => (s === '' ? undefined : s);

/**
 * `inference.GRPCInferenceService` over the transport-neutral core: each RPC decodes its message,
 * calls the core, and encodes the result; every failure is a gRPC status with the HTTP surface's
 * message (Open Inference Protocol gRPC; Triton protocol).
 *
 * @example
 * const server = new Server({ 'grpc.max_receive_message_length': DEFAULT_MAX_RECEIVE_BYTES });
 * server.addService(loadKserveProtos().inference, createKserveGrpcService(core, { logger }));
 */
export function createKserveGrpcService(
  core: InferenceCore,
  opts: KserveGrpcServiceOptions = {},
): UntypedServiceImplementation {
  const { logger } = opts;
  const decodeOpts = opts.maxElements === undefined ? {} : { maxElements: opts.maxElements };

  const infer = async (msg: ModelInferRequestMsg, call: { cancelled: boolean }): Promise<ModelInferResponseMsg> => {
    const request = decodeModelInferRequest(msg, decodeOpts);
    // Cheap cancellation: a request whose caller has gone (cancel, deadline) is not run at all.
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    return encodeModelInferResponse(await core.infer(request));
  };

  const service: UntypedServiceImplementation = {
    ServerLive: unary('ServerLive', () => ({ live: core.isLive() }), logger),
    ServerReady: unary('ServerReady', () => ({ ready: core.isReady() }), logger),
    ModelReady: unary(
      'ModelReady',
      (req: NameVersionMsg) => ({ ready: core.isModelReady(req.name, orUndefined(req.version)) }),
      logger,
    ),
    ServerMetadata: unary(
      'ServerMetadata',
      () => ({ name: core.serverName, version: core.serverVersion, extensions: [...core.extensions] }),
      logger,
    ),
    ModelMetadata: unary(
      'ModelMetadata',
      (req: NameVersionMsg) => core.modelMetadata(req.name, orUndefined(req.version)),
      logger,
    ),
    ModelInfer: unary('ModelInfer', infer, logger),
    ModelStreamInfer: modelStreamInfer(infer, { maxInFlight: opts.maxStreamInFlight ?? 16, logger }),
    ModelConfig: unary(
      'ModelConfig',
      (req: NameVersionMsg) => ({ config: modelConfigToJson(core.modelConfig(req.name, orUndefined(req.version))) }),
      logger,
    ),
    ModelStatistics: unary(
      'ModelStatistics',
      (req: NameVersionMsg) => ({ model_stats: core.statistics(orUndefined(req.name), orUndefined(req.version)) }),
      logger,
    ),
    // One repository per server: repository_name is not consulted.
    RepositoryIndex: unary(
      'RepositoryIndex',
      async (req: RepositoryIndexRequestMsg) => ({
        models: (await core.repositoryIndex({ readyOnly: req.ready })).map((m) => ({ ...m, version: m.version ?? '' })),
      }),
      logger,
    ),
    RepositoryModelLoad: unary(
      'RepositoryModelLoad',
      async (req: RepositoryModelRequestMsg) => {
        await core.loadModel(req.model_name, repositoryLoadOptions(req.parameters));
        return {};
      },
      logger,
    ),
    // `unload_dependents` needs no handling: this server has no ensembles.
    RepositoryModelUnload: unary(
      'RepositoryModelUnload',
      async (req: RepositoryModelRequestMsg) => {
        await core.unloadModel(req.model_name);
        return {};
      },
      logger,
    ),
  };
  for (const method of UNSUPPORTED) {
    service[method] = unary(
      method,
      () => {
        throw new AppError('UNIMPLEMENTED', `${method} is not supported by this server`);
      },
      logger,
    );
  }
  return service;
}
