import { AuthorizationsApi } from './authorizations.ts';
import type { Transport } from './transport.ts';

/** What every control-plane call takes besides its arguments. */
export interface RequestOptions {
  /** Stops the call: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Which functions a list holds (NVCF: function permissions): `private` the caller's account's own, `authorized`
 * other accounts' shared with it, `public` NVIDIA's public functions (none on a self-hosted gateway).
 */
export type FunctionVisibility = 'authorized' | 'private' | 'public';

/** What `functions.list` and `functions.listIds` take. */
export interface ListFunctionsOptions extends RequestOptions {
  /** Default: all three. */
  visibility?: FunctionVisibility[];
}

/** A function version's state (NVCF function lifecycle), from its deployment and the workers alive for it. */
export type FunctionStatus = 'ACTIVE' | 'DEPLOYING' | 'ERROR' | 'INACTIVE' | 'DELETED';
export type ApiBodyFormat = 'CUSTOM' | 'PREDICT_V2';
export type FunctionType = 'DEFAULT' | 'STREAMING' | 'LLM';

/**
 * A model a function serves: `model-repository://<name>/<version>` for one the workers hold, or
 * `asset://<assetId>` for an uploaded `.onnx` file or zipped Triton model directory.
 */
export interface ModelReference {
  name: string;
  version: string;
  uri: string;
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface HealthCheck {
  protocol: 'HTTP' | 'gRPC';
  uri: string;
  port: number;
  /** An ISO-8601 duration, e.g. `PT10S`. */
  timeout: string;
  expectedStatusCode: number;
}

/** The body of `functions.create` and `functions.createVersion` (NVCF API reference: CreateFunctionRequest). */
export interface CreateFunctionRequest {
  /** `^[a-z0-9A-Z][a-z0-9A-Z\-_]*$`, 1–128 characters. */
  name: string;
  inferenceUrl: string;
  inferencePort?: number;
  healthUri?: string;
  health?: HealthCheck;
  containerImage?: string;
  helmChart?: string;
  helmChartServiceName?: string;
  containerArgs?: string;
  containerEnvironment?: KeyValue[];
  /**
   * A model function's ONNX model, `models[0]`; without `models`, a `containerImage` makes a container function
   * (an HTTP server beside a worker: README "Container functions").
   */
  models?: ModelReference[];
  resources?: ModelReference[];
  /** Default `CUSTOM`. */
  apiBodyFormat?: ApiBodyFormat;
  /** Default `DEFAULT`. */
  functionType?: FunctionType;
  description?: string;
  tags?: string[];
  /**
   * Handed to a container function's server as environment variables, stored encrypted and never returned (the
   * DTO lists their names as `secrets`). A model function takes none (400).
   */
  secrets?: Secret[];
}

/** One secret (NVCF API reference: SecretDto). */
export interface Secret {
  /** `^[a-z0-9A-Z][a-z0-9A-Z_]*$`, 1–64 characters: the environment variable the server gets it as. */
  name: string;
  /** 1–4096 characters. */
  value: string;
}

/** The body of `functions.updateSecrets` (NVCF API reference: UpdateSecretsRequest): each name once. */
export interface UpdateSecretsRequest {
  /** The version's whole set: it replaces what the version had (`[]` removes them). */
  secrets: Secret[];
}

/** The body of `functions.updateMetadata`: only these two can change on an existing version. */
export interface UpdateMetadataRequest {
  tags?: string[];
  description?: string;
}

/** One input or output of a function's model, as a KServe V2 request names it. */
export interface TensorSpec {
  name: string;
  /** A KServe V2 datatype, e.g. `INT32`, `FP32`, `BYTES`. */
  datatype: string;
  /** `-1` for a variable dimension. */
  shape: number[];
}

/** A worker serving a version. */
export interface FunctionInstance {
  instanceId: string;
  functionId: string;
  functionVersionId: string;
  instanceStatus: string;
  ncaId: string;
  /** The GPU the worker reports (`CPU` for none). */
  gpu?: string;
  instanceType?: string;
  /** The worker's pool (`WORKER_POOL`). */
  backend?: string;
  /** When the worker started (ISO-8601). */
  instanceCreatedAt?: string;
  /** The worker's latest heartbeat (ISO-8601). */
  instanceUpdatedAt?: string;
}

/**
 * One function version (NVCF API reference: FunctionDto). The container fields of the create request
 * (`containerImage`, `inferencePort`, `health`, …) come back as they were given.
 */
export interface FunctionDto {
  id: string;
  versionId: string;
  ncaId: string;
  name: string;
  status: FunctionStatus;
  inferenceUrl: string;
  inferencePort?: number;
  /** The path the function's readiness is checked on. */
  healthUri: string;
  health?: HealthCheck;
  containerImage?: string;
  helmChart?: string;
  helmChartServiceName?: string;
  containerArgs?: string;
  resources: ModelReference[];
  /** The names of the function's secrets (never their values). */
  secrets?: string[];
  /** @deprecated the same as `secrets`. */
  secretNames?: string[];
  ownedByDifferentAccount: boolean;
  containerEnvironment: KeyValue[];
  models: ModelReference[];
  apiBodyFormat: ApiBodyFormat;
  functionType: FunctionType;
  /** ISO-8601. */
  createdAt: string;
  description: string;
  tags: string[];
  /** The live workers serving this version. */
  activeInstances: FunctionInstance[];
  /**
   * Not in NVCF's DTO: the model's inputs and outputs, what a caller needs to build a KServe V2 request body
   * (absent for a container function).
   */
  model?: {
    name: string;
    version: string;
    platform: string;
    inputs: TensorSpec[];
    outputs: TensorSpec[];
    /** The model keeps state across a sequence's requests (sequence batching). */
    sequence?: boolean;
  };
}

/** One entry of a deployment (NVCF API reference: DeploymentSpecification). */
export interface DeploymentSpecification {
  gpu: string;
  instanceType: string;
  backend?: string;
  minInstances: number;
  maxInstances: number;
  /** Jobs of the version a worker runs at a time (1–1024, as NVCF bounds it; default 1). */
  maxRequestConcurrency?: number;
  preferredOrder?: number;
  availabilityZones?: string[];
  clusters?: string[];
  regions?: string[];
  attributes?: string[];
  configuration?: Record<string, unknown>;
}

/** The body of `deployments.create` and `deployments.update`. */
export interface DeploymentRequest {
  deploymentSpecifications: DeploymentSpecification[];
}

/** A version's deployment (NVCF API reference: DeploymentDto). */
export interface DeploymentDto {
  functionId: string;
  functionVersionId: string;
  functionName: string;
  ncaId: string;
  functionStatus: FunctionStatus;
  /** The queue the version's requests wait in (deprecated in NVCF). */
  requestQueueUrl: string;
  healthInfo: { gpu: string; backend: string; error: string; instanceType?: string }[];
  deploymentSpecifications: DeploymentSpecification[];
  /** When the version was deployed (ISO-8601). */
  createdAt: string;
}

/** The queues of a function's versions (`GET /v2/nvcf/queues/functions/{fid}[/versions/{vid}]`). */
export interface QueueDetails {
  functionId: string;
  queues: {
    functionVersionId: string;
    functionName: string;
    functionStatus: FunctionStatus;
    /** Requests in the version's queue: waiting for a worker, or taken by one and not yet finished. */
    queueDepth: number;
  }[];
}

/** Where a request waits (`GET /v2/nvcf/queues/{reqId}/position`). */
export interface QueuePosition {
  functionId: string;
  functionVersionId: string;
  /** Requests ahead of it: 0 once a worker has it; an estimate capped at 1000. */
  positionInQueue: number;
}

const seg = encodeURIComponent;
const versionPath = (prefix: string, functionId: string, versionId: string) =>
  `${prefix}/functions/${seg(functionId)}/versions/${seg(versionId)}`;
const signalOf = (opts: RequestOptions) => (opts.signal ? { signal: opts.signal } : {});
/** `?visibility=a&visibility=b` (NVCF's form: the parameter repeated), or nothing. */
const visibilityQuery = (opts: ListFunctionsOptions) =>
  opts.visibility && opts.visibility.length > 0
    ? `?${opts.visibility.map((v) => `visibility=${encodeURIComponent(v)}`).join('&')}`
    : '';

/**
 * Function management (NVCF API reference): register functions and their versions, read them, change their
 * metadata, delete versions. Every answer carries each version's live status.
 *
 * @example
 * const fn = await nvcf.functions.create({
 *   name: 'sum-and-difference',
 *   inferenceUrl: '/v2/models/simple/infer',
 *   apiBodyFormat: 'PREDICT_V2',
 *   models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
 * });
 * fn.status; // 'INACTIVE' until deployed
 */
export class FunctionsApi {
  readonly #t: Transport;
  /** Sharing functions with other accounts: who besides their owner may invoke them. */
  readonly authorizations: AuthorizationsApi;

  constructor(transport: Transport) {
    this.#t = transport;
    this.authorizations = new AuthorizationsApi(transport);
  }

  /**
   * Every version of every function the credential may see (`GET /v2/nvcf/functions`): its account's own, and the
   * versions other accounts shared with it (`ownedByDifferentAccount`), as `visibility` asks.
   */
  async list(opts: ListFunctionsOptions = {}): Promise<FunctionDto[]> {
    const path = `/v2/nvcf/functions${visibilityQuery(opts)}`;
    return (await this.#t.json<{ functions: FunctionDto[] }>('GET', path, undefined, signalOf(opts))).functions;
  }

  /** The ids of those functions, each once (`GET /v2/nvcf/functions/ids`). */
  async listIds(opts: ListFunctionsOptions = {}): Promise<string[]> {
    const path = `/v2/nvcf/functions/ids${visibilityQuery(opts)}`;
    return (await this.#t.json<{ functionIds: string[] }>('GET', path, undefined, signalOf(opts))).functionIds;
  }

  /**
   * Registers a new function (its first version), `INACTIVE` until deployed. A POST: a dropped connection is not
   * retried, since the retry would register a second function.
   */
  async create(req: CreateFunctionRequest, opts: RequestOptions = {}): Promise<FunctionDto> {
    return (await this.#t.json<{ function: FunctionDto }>('POST', '/v2/nvcf/functions', req, signalOf(opts))).function;
  }

  /** Registers a new version of an existing function (404 when there is none). */
  async createVersion(functionId: string, req: CreateFunctionRequest, opts: RequestOptions = {}): Promise<FunctionDto> {
    const path = `/v2/nvcf/functions/${seg(functionId)}/versions`;
    return (await this.#t.json<{ function: FunctionDto }>('POST', path, req, signalOf(opts))).function;
  }

  /** Every version of one function, oldest first (404 when there is none). */
  async listVersions(functionId: string, opts: RequestOptions = {}): Promise<FunctionDto[]> {
    const path = `/v2/nvcf/functions/${seg(functionId)}/versions`;
    return (await this.#t.json<{ functions: FunctionDto[] }>('GET', path, undefined, signalOf(opts))).functions;
  }

  /** One version (404 when unknown). */
  async getVersion(functionId: string, versionId: string, opts: RequestOptions = {}): Promise<FunctionDto> {
    const path = versionPath('/v2/nvcf', functionId, versionId);
    return (await this.#t.json<{ function: FunctionDto }>('GET', path, undefined, signalOf(opts))).function;
  }

  /** Replaces a version's tags and/or description (`PUT /v2/nvcf/metadata/functions/{fid}/versions/{vid}`). */
  async updateMetadata(
    functionId: string,
    versionId: string,
    change: UpdateMetadataRequest,
    opts: RequestOptions = {},
  ): Promise<FunctionDto> {
    const path = versionPath('/v2/nvcf/metadata', functionId, versionId);
    return (await this.#t.json<{ function: FunctionDto }>('PUT', path, change, signalOf(opts))).function;
  }

  /**
   * Replaces a version's secrets as a whole (`PUT /v2/nvcf/secrets/functions/{fid}/versions/{vid}`, scope
   * `update_secrets`); workers serving it restart its server with them. They are never read back.
   *
   * @example
   * await nvcf.functions.updateSecrets(fn.id, fn.versionId, { secrets: [{ name: 'API_TOKEN', value: token }] });
   */
  async updateSecrets(
    functionId: string,
    versionId: string,
    req: UpdateSecretsRequest,
    opts: RequestOptions = {},
  ): Promise<void> {
    await this.#t.json('PUT', versionPath('/v2/nvcf/secrets', functionId, versionId), req, signalOf(opts));
  }

  /** Deletes a version (the function with its last one); requests still waiting in its queue are answered. */
  async deleteVersion(functionId: string, versionId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#t.json('DELETE', versionPath('/v2/nvcf', functionId, versionId), undefined, signalOf(opts));
  }
}

/**
 * Function deployment (NVCF API reference): a version is invocable once deployed, and served by every worker that
 * holds its model. `minInstances: 0` keeps it invocable with no worker (requests wait in its queue).
 *
 * @example
 * await nvcf.deployments.create(fn.id, fn.versionId, {
 *   deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 2 }],
 * });
 */
export class DeploymentsApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Deploys a version (400 when it already is: use `update`). */
  async create(
    functionId: string,
    versionId: string,
    req: DeploymentRequest,
    opts: RequestOptions = {},
  ): Promise<DeploymentDto> {
    return this.#send('POST', functionId, versionId, req, opts);
  }

  /** Changes a deployed version's specifications; `gpu` and `backend` cannot change (400). */
  async update(
    functionId: string,
    versionId: string,
    req: DeploymentRequest,
    opts: RequestOptions = {},
  ): Promise<DeploymentDto> {
    return this.#send('PUT', functionId, versionId, req, opts);
  }

  /** A version's deployment and live status. */
  async get(functionId: string, versionId: string, opts: RequestOptions = {}): Promise<DeploymentDto> {
    return this.#send('GET', functionId, versionId, undefined, opts);
  }

  /** Undeploys a version (workers finish its in-flight requests) and returns it, now `INACTIVE`. */
  async delete(functionId: string, versionId: string, opts: RequestOptions = {}): Promise<FunctionDto> {
    const path = versionPath('/v2/nvcf/deployments', functionId, versionId);
    return (await this.#t.json<{ function: FunctionDto }>('DELETE', path, undefined, signalOf(opts))).function;
  }

  async #send(
    method: string,
    functionId: string,
    versionId: string,
    body: DeploymentRequest | undefined,
    opts: RequestOptions,
  ): Promise<DeploymentDto> {
    const path = versionPath('/v2/nvcf/deployments', functionId, versionId);
    return (await this.#t.json<{ deployment: DeploymentDto }>(method, path, body, signalOf(opts))).deployment;
  }
}

/**
 * Queue details (NVCF API reference): how many requests wait for each version of a function, and where one
 * request stands.
 *
 * @example
 * const { queues } = await nvcf.queues.depth(functionId);
 * console.log(queues.map((q) => `${q.functionVersionId}: ${q.queueDepth}`));
 */
export class QueuesApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** The queue of each version of a function, or of the one version given (404 when unknown). */
  depth(functionId: string, versionId?: string, opts: RequestOptions = {}): Promise<QueueDetails> {
    const path =
      versionId === undefined
        ? `/v2/nvcf/queues/functions/${seg(functionId)}`
        : versionPath('/v2/nvcf/queues', functionId, versionId);
    return this.#t.json<QueueDetails>('GET', path, undefined, signalOf(opts));
  }

  /** Where a request waits (404 once it is no longer queued: finished, or unknown). */
  position(requestId: string, opts: RequestOptions = {}): Promise<QueuePosition> {
    const path = `/v2/nvcf/queues/${seg(requestId)}/position`;
    return this.#t.json<QueuePosition>('GET', path, undefined, signalOf(opts));
  }
}
