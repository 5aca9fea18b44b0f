import type { ModelConfig } from '@nvcf/models';
import type { Tensor, TensorSpec } from '@nvcf/protocol';
import type { ModelStatistics, ModelStatisticsSnapshot } from './model-statistics.ts';

/**
 * The transport-neutral inference server (KServe's DataPlane, Triton's core): the HTTP, gRPC and queue
 * adapters parse their wire format into these types, call the core, and encode what it returns.
 * Every failure is an AppError; each adapter maps its code once to its own status space.
 */
export interface RequestedOutput {
  name: string;
  /** Classification extension: return the top N classes of this output as BYTES. */
  classification?: number;
  parameters?: Record<string, unknown>;
}

export interface CoreInferRequest {
  modelName: string;
  /** Absent or empty: the latest ready version. */
  modelVersion?: string;
  id?: string;
  parameters?: Record<string, unknown>;
  inputs: Tensor[];
  /** Absent: every output of the model, in the model's order. */
  outputs?: RequestedOutput[];
  /** The caller went away (client disconnect, gRPC cancel or deadline): queued work is dropped. */
  signal?: AbortSignal;
  /**
   * The caller gives the inputs' buffers away (a request body it read for this call alone): the core may
   * move them to a model instance's thread without copying, leaving them empty. Unset, they are copied.
   */
  inputsOwned?: boolean;
}

export interface CoreInferResponse {
  modelName: string;
  modelVersion: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: Tensor[];
}

export interface ModelMetadata {
  name: string;
  versions: string[];
  platform: string;
  /** Shapes carry a leading -1 when the model batches. */
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  /**
   * Facts a client should know that the standard fields cannot say (OIP gRPC `properties`; HTTP
   * `parameters`).
   */
  properties?: Record<string, string>;
}

export type ModelState = 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

/** Where the server is in its life: loading the repository at start, serving, or shutting down. */
export type ServerState = 'INITIALIZING' | 'READY' | 'EXITING';

/** One version of a model and its state; `reason` says why it is not READY. */
export interface VersionState {
  version: string;
  state: ModelState;
  reason: string;
}

export interface RepositoryIndexEntry {
  name: string;
  version?: string;
  state: ModelState;
  reason: string;
}

export interface LoadOptions {
  /** A ModelConfig in Triton's JSON form that replaces config.pbtxt for this load. */
  configOverride?: string;
}

export interface InferenceCore {
  readonly serverName: string;
  readonly serverVersion: string;
  readonly extensions: readonly string[];
  isLive(): boolean;
  isReady(): boolean;
  /** INITIALIZING until the repository has been loaded at start, EXITING once close() began. */
  serverState(): ServerState;
  /** Throws INVALID_ARGUMENT (unknown model) or UNAVAILABLE (version not ready). */
  modelMetadata(name: string, version?: string): ModelMetadata;
  isModelReady(name: string, version?: string): boolean;
  modelConfig(name: string, version?: string): ModelConfig;
  /** Whether the model batches (its config has max_batch_size > 0). */
  modelBatches(name: string): boolean;
  /** The only input of a single-input model (raw binary requests), or undefined. */
  singleInput(name: string, version?: string): TensorSpec | undefined;
  /** Throws UNIMPLEMENTED for a decoupled model (`inferDecoupled` answers those). */
  infer(request: CoreInferRequest): Promise<CoreInferResponse>;
  /**
   * Whether the model answers one request with a stream of responses (Triton's decoupled transaction policy); false
   * for a model or version that is not loaded.
   */
  isDecoupled(name: string, version?: string): boolean;
  /**
   * Runs a request on a decoupled model: each response goes to `onResponse` as the model makes it; resolves once the
   * request is complete (Triton's final flag). A model that is not decoupled answers with its one response.
   */
  inferDecoupled(request: CoreInferRequest, onResponse: (response: CoreInferResponse) => void): Promise<void>;
  /** Every loaded version, or one model's versions, or one version. Unknown model → INVALID_ARGUMENT. */
  statistics(name?: string, version?: string): ModelStatisticsSnapshot[];
  repositoryIndex(opts?: { readyOnly?: boolean }): Promise<RepositoryIndexEntry[]>;
  /**
   * A model's versions, oldest first: those loaded (READY, or LOADING/UNLOADING while it changes) and those it
   * served before an unload or a reload that dropped them (UNAVAILABLE, with the reason). Empty for a model
   * never loaded. The Triton v1 status reads it.
   */
  versionStates(name: string): VersionState[];
  /** Loads (or reloads) every version the model's version policy selects. Failure → `failed to load '<m>'…`. */
  loadModel(name: string, opts?: LoadOptions): Promise<void>;
  unloadModel(name: string): Promise<void>;
  /** The live statistics of every loaded version (metrics read them at scrape time). */
  servedVersions(): ModelStatistics[];
  /** Called after a model's set of ready versions changed (load, reload, unload). */
  onChange(listener: (name: string) => void): void;
  close(): Promise<void>;
}
