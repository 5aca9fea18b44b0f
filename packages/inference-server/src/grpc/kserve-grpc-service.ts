import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  type NameVersionMsg,
  type RepositoryIndexRequestMsg,
  type RepositoryModelRequestMsg,
  unary,
} from '@nvcf/kserve-grpc';
import { modelConfigToJson } from '@nvcf/models';
import { AppError, type SharedMemoryRef } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { InferenceCore } from '../core/core-types.ts';
import { createSystemSharedMemory, type SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { createModelInfer, createStreamInfer, orUndefined } from './kserve-grpc-infer.ts';
import { modelStreamInfer } from './model-stream-infer.ts';
import { repositoryLoadOptions } from './repository-load-options.ts';

export interface KserveGrpcServiceOptions {
  logger?: Logger;
  /** Per-input element limit, checked against the shape before anything is allocated. Default 2^28. */
  maxElements?: number;
  /** ModelStreamInfer: requests of one stream that may run at once (answers stay in order). Default 16. */
  maxStreamInFlight?: number;
  /** System shared memory regions, shared with the HTTP surface; default: a set of its own, clients allowed. */
  sharedMemory?: SystemSharedMemory;
}

/** Declared in grpc_service.proto for stub compatibility, answered UNIMPLEMENTED. */
const UNSUPPORTED = ['TraceSetting', 'LogSettings'] as const;

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
  const shm = opts.sharedMemory ?? createSystemSharedMemory({ allowClientShm: true });
  const decodeOpts = {
    ...(opts.maxElements === undefined ? {} : { maxElements: opts.maxElements }),
    sharedMemory: (ref: SharedMemoryRef, label: string) => shm.read(ref, label),
  };
  const infer = createModelInfer(core, shm, decodeOpts);
  const streamInfer = createStreamInfer(core, infer, decodeOpts);
  return {
    ...metadataRpcs(core, logger),
    ModelInfer: unary('ModelInfer', infer, logger),
    ...sharedMemoryRpcs(shm, logger),
    ModelStreamInfer: modelStreamInfer(streamInfer, { maxInFlight: opts.maxStreamInFlight ?? 16, logger }),
    ...repositoryRpcs(core, logger),
    ...unsupportedRpcs(logger),
  };
}

/** Health, metadata, configuration and statistics of the server and its models. */
function metadataRpcs(core: InferenceCore, logger: Logger | undefined): UntypedServiceImplementation {
  return {
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
  };
}

function repositoryRpcs(core: InferenceCore, logger: Logger | undefined): UntypedServiceImplementation {
  return {
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
}

function unsupportedRpcs(logger: Logger | undefined): UntypedServiceImplementation {
  const service: UntypedServiceImplementation = {};
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

/**
 * The shared memory RPCs: system regions on `shm`; CUDA ones as a server without GPUs answers them (nothing to
 * list, register refused, unregister a no-op).
 */
function sharedMemoryRpcs(shm: SystemSharedMemory, logger: Logger | undefined): UntypedServiceImplementation {
  const count = (value: unknown) => Number(value ?? 0);
  return {
    SystemSharedMemoryStatus: unary(
      'SystemSharedMemoryStatus',
      (req: { name: string }) => ({
        regions: Object.fromEntries(
          shm
            .status(orUndefined(req.name))
            .map((r) => [r.name, { name: r.name, key: r.key, offset: r.offset, byte_size: r.byteSize }]),
        ),
      }),
      logger,
    ),
    SystemSharedMemoryRegister: unary(
      'SystemSharedMemoryRegister',
      (req: { name: string; key: string; offset: unknown; byte_size: unknown }) => {
        shm.register({ name: req.name, key: req.key, offset: count(req.offset), byteSize: count(req.byte_size) });
        return {};
      },
      logger,
    ),
    SystemSharedMemoryUnregister: unary(
      'SystemSharedMemoryUnregister',
      (req: { name: string }) => {
        shm.unregister(orUndefined(req.name));
        return {};
      },
      logger,
    ),
    CudaSharedMemoryStatus: unary(
      'CudaSharedMemoryStatus',
      (req: { name: string }) => {
        if (req.name !== '') throw new AppError('NOT_FOUND', `Unable to find cuda shared memory region: '${req.name}'`);
        return { regions: {} };
      },
      logger,
    ),
    CudaSharedMemoryRegister: unary(
      'CudaSharedMemoryRegister',
      (req: { name: string }) => {
        throw new AppError(
          'INVALID_ARGUMENT',
          `failed to register CUDA shared memory region: '${req.name}', GPUs not supported`,
        );
      },
      logger,
    ),
    CudaSharedMemoryUnregister: unary('CudaSharedMemoryUnregister', () => ({}), logger),
  };
}
