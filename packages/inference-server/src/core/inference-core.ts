import type { TensorSpec } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { Tracer } from '@opentelemetry/api';
import type { SessionCache } from '../runtime/session-cache.ts';
import type { InferenceCore } from './core-types.ts';
import { ModelExecutor } from './model-executor.ts';
import { ModelRepository } from './model-repository.ts';

export interface CoreOptions {
  repository: string;
  sessions: SessionCache;
  logger: Logger;
  serverVersion?: string;
  /** Instances of a model whose config names no instance count (Triton's ONNX Runtime default: 2). */
  cpuInstances?: number;
  /** OpenTelemetry: a `session.run` span per model run (absent: tracing off, no span). */
  tracer?: Tracer;
}

const EXTENSIONS = [
  'classification',
  'model_repository',
  'model_configuration',
  'system_shared_memory',
  'cuda_shared_memory',
  'binary_tensor_data',
  'statistics',
];

/**
 * The inference server's core: which models and versions are loaded, their configs, running a request
 * with statistics, and loading/unloading. Transport adapters sit on top; see core-types.ts.
 */
export type StartableCore = InferenceCore & { start(): Promise<void> };

/**
 * Composes the core as Triton's is split: the model repository (which models exist, their lifecycle and configs)
 * and the executor (running requests on them, with statistics); this keeps only the server's own state.
 */
export function createInferenceCore(opts: CoreOptions): StartableCore {
  const repository = new ModelRepository(opts);
  const executor = new ModelExecutor(repository, opts.tracer);
  let started = false;
  let closing = false;
  return {
    serverName: 'triton',
    serverVersion: opts.serverVersion ?? '2.59.0',
    extensions: EXTENSIONS,
    async start() {
      await repository.loadAll();
      started = true;
    },
    isLive: () => true,
    isReady: () => started && repository.startupSucceeded(),
    serverState: () => (closing ? 'EXITING' : started ? 'READY' : 'INITIALIZING'),
    modelMetadata: (name, v) => repository.modelMetadata(name, v),
    isModelReady: (name, v) => repository.isModelReady(name, v),
    modelConfig: (name, v) => repository.modelConfig(name, v),
    modelBatches: (name) => repository.modelBatches(name),
    singleInput: (name, v) => repository.singleInput(name, v),
    isDecoupled: (name, v) => repository.isDecoupled(name, v),
    inferDecoupled: (req, onResponse) => executor.inferDecoupled(req, onResponse),
    infer: (req) => executor.infer(req),
    statistics: (name, v) => executor.statistics(name, v),
    repositoryIndex: (o) => repository.repositoryIndex(o),
    versionStates: (name) => repository.versionStates(name),
    loadModel: (name, o) => repository.load(name, o?.configOverride),
    unloadModel: (name) => repository.unload(name),
    servedVersions: () => executor.servedVersions(),
    onChange: (listener) => repository.onChange(listener),
    async close() {
      closing = true;
      await repository.close();
    },
  };
}

export type { TensorSpec };
