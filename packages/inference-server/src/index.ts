/**
 * The Triton-class inference server: a transport-neutral core (models, versions, readiness, metadata,
 * infer with dynamic batching, statistics, repository control) over ONNX Runtime sessions that run on
 * worker threads, one per model instance. The worker app puts its HTTP, gRPC and queue surfaces on top.
 */
export type {
  CoreInferRequest,
  CoreInferResponse,
  InferenceCore,
  LoadOptions,
  ModelMetadata,
  ModelState,
  RepositoryIndexEntry,
  RequestedOutput,
  ServerState,
  VersionState,
} from './core/core-types.ts';
export { type CoreConfig, startInferenceCore } from './core/create-core.ts';
export { type CoreOptions, createInferenceCore, type StartableCore } from './core/inference-core.ts';
export {
  type BatchSizeStats,
  type BatchStats,
  type FailureReason,
  type InferenceStats,
  ModelStatistics,
  type ModelStatisticsSnapshot,
  type StatDuration,
} from './core/model-statistics.ts';
export { EXECUTION_PROVIDERS, type ExecutionProvider, parseExecutionProviders } from './runtime/execution-providers.ts';
export type { UnsupportedTensor } from './runtime/model-signature.ts';
export type { LoadedModel, RunOptions } from './runtime/onnx-runner.ts';
export { SessionCache, type SessionCacheOptions, type SessionLogger } from './runtime/session-cache.ts';
