import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  decodeModelInferRequest,
  encodeModelInferResponse,
  type GrpcInferRequest,
  type ModelInferRequestMsg,
  type ModelInferResponseMsg,
  type NameVersionMsg,
  type RepositoryIndexRequestMsg,
  type RepositoryModelRequestMsg,
  unary,
} from '@nvcf/kserve-grpc';
import { modelConfigToJson } from '@nvcf/models';
import { AppError, encodeBinaryTensorData, type SharedMemoryRef, sharedMemoryRefOf } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { InferenceCore } from '../core/core-types.ts';
import { createSystemSharedMemory, type SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { modelStreamInfer, ResponseQueue, type StreamAnswer } from './model-stream-infer.ts';
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

const orUndefined = (s: string) => (s === '' ? undefined : s);

/** Triton's `triton_final_response` response parameter. */
const FINAL = { triton_final_response: { bool_param: true, parameter_choice: 'bool_param' } } as const;
const NOT_FINAL = { triton_final_response: { bool_param: false, parameter_choice: 'bool_param' } } as const;

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

  const infer = async (msg: ModelInferRequestMsg, call: { cancelled: boolean }): Promise<ModelInferResponseMsg> => {
    if (core.isDecoupled(msg.model_name, orUndefined(msg.model_version))) {
      throw new AppError('UNIMPLEMENTED', "ModelInfer RPC doesn't support models with decoupled transaction policy");
    }
    const request = decodeModelInferRequest(msg, decodeOpts);
    const outputShm = sharedMemoryOutputs(request.outputs);
    // Cheap cancellation: a request whose caller has gone (cancel, deadline) is not run at all.
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    const res = await core.infer(request);
    if (outputShm.size === 0) return encodeModelInferResponse(res);
    for (const output of res.outputs) {
      const ref = outputShm.get(output.name);
      if (ref) {
        const bytes = encodeBinaryTensorData(output.datatype, output.shape, output.data, `output '${output.name}'`);
        shm.write(ref, bytes, output.name);
      }
    }
    return encodeModelInferResponse(res, { inSharedMemory: new Set(outputShm.keys()) });
  };

  /**
   * A stream's request: every response carries `triton_final_response` (Triton's); a decoupled model's responses
   * come as it makes them (false on each), then — only if the request set `triton_enable_empty_final_response` —
   * an empty response that says the request is complete.
   */
  const streamInfer = async (msg: ModelInferRequestMsg, call: { cancelled: boolean }): Promise<StreamAnswer> => {
    const { triton_enable_empty_final_response: emptyFinal, ...parameters } = msg.parameters;
    if (emptyFinal !== undefined && emptyFinal.parameter_choice !== 'bool_param') {
      throw new AppError(
        'INVALID_ARGUMENT',
        "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.",
      );
    }
    const request = { ...msg, parameters };
    if (!core.isDecoupled(msg.model_name, orUndefined(msg.model_version))) {
      const response = await infer(request, call);
      return { ...response, parameters: { ...response.parameters, ...FINAL } };
    }
    const decoded = decodeModelInferRequest(request, decodeOpts);
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    const queue = new ResponseQueue<ModelInferResponseMsg>();
    core
      .inferDecoupled(decoded, (res) => {
        const response = encodeModelInferResponse(res);
        queue.push({ ...response, parameters: { ...response.parameters, ...NOT_FINAL } });
      })
      .then(
        () => {
          if (emptyFinal?.bool_param === true) {
            queue.push({
              model_name: msg.model_name,
              model_version: msg.model_version,
              id: msg.id,
              parameters: FINAL,
              outputs: [],
              raw_output_contents: [],
            });
          }
          queue.end();
        },
        (err: unknown) => queue.fail(err),
      );
    return queue;
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
    ...sharedMemoryRpcs(shm, logger),
    ModelStreamInfer: modelStreamInfer(streamInfer, { maxInFlight: opts.maxStreamInFlight ?? 16, logger }),
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

/** Requested outputs that go to a shared memory region, by name (Triton shared memory extension). */
function sharedMemoryOutputs(outputs: GrpcInferRequest['outputs']): Map<string, SharedMemoryRef> {
  const refs = new Map<string, SharedMemoryRef>();
  for (const output of outputs ?? []) {
    const ref = sharedMemoryRefOf(output.parameters, output.name);
    if (!ref) continue;
    if (output.parameters?.shared_memory_byte_size === undefined) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${output.name}'`,
      );
    }
    if (output.classification !== undefined) {
      throw new AppError('INVALID_ARGUMENT', "Output can't set both 'shared_memory_region' and 'classification'");
    }
    refs.set(output.name, ref);
  }
  return refs;
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
