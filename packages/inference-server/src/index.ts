/**
 * The Triton-class inference server: a transport-neutral core (models, versions, readiness, metadata,
 * infer with dynamic batching, statistics, repository control) over ONNX Runtime sessions that run on
 * worker threads, one per model instance, and the thin adapters that serve it: KServe V2 HTTP and gRPC
 * (each with Triton's v1 API beside it), Triton's metrics, and Triton's restricted APIs. The adapters
 * serve the core they are given; the worker app decides what the network may see and adds its queue.
 */

export { startMetricsServer } from '@nvcf/service-kit';
export {
  GRPC_RESTRICTED_PREFIX,
  parseRestrictedApis,
  RESTRICTED_API_GROUPS,
  type RestrictedApiGroup,
  type RestrictedApis,
  type Restriction,
} from './access/restricted-apis.ts';
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
export {
  type KserveGrpcServer,
  type KserveGrpcServerOptions,
  startKserveGrpcServer,
} from './grpc/kserve-grpc-server.ts';
export type { KserveGrpcServiceOptions } from './grpc/kserve-grpc-service.ts';
export { tritonV1GrpcDefinition, V1_GRPC_SERVICE } from './grpc-v1/v1-grpc-definition.ts';
export { createKserveHttpApp, DEFAULT_MAX_BODY_BYTES, type KserveHttpOptions } from './http/kserve-app.ts';
export {
  type KserveHttpServerOptions,
  type RunningKserveHttpServer,
  startKserveHttpServer,
} from './http/kserve-server.ts';
export { decodeInferCall, type InferBody, type InferCall, type ModelRef } from './inference/infer-call.ts';
export { answerInferCall, type InferReply } from './inference/infer-exchange.ts';
export { createTritonMetrics } from './metrics/triton-metrics.ts';
export { EXECUTION_PROVIDERS, type ExecutionProvider, parseExecutionProviders } from './runtime/execution-providers.ts';
export type { UnsupportedTensor } from './runtime/model-signature.ts';
export type { LoadedModel, RunOptions } from './runtime/onnx-runner.ts';
export { SessionCache, type SessionCacheOptions, type SessionLogger } from './runtime/session-cache.ts';
export {
  createSystemSharedMemory,
  type SharedMemoryRegion,
  type SystemSharedMemory,
  type SystemSharedMemoryOptions,
} from './shm/system-shared-memory.ts';
export type { TritonV1Options } from './triton-v1/triton-v1-service.ts';
