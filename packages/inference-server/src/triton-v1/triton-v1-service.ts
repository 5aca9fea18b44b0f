import { AppError } from '@nvcf/protocol';
import type { InferenceCore } from '../core/core-types.ts';
import type { StatDuration } from '../core/model-statistics.ts';
import { decodeV1InferRequest, type V1RawInputs } from './infer-request-v1.ts';
import { encodeV1InferResponse, type V1InferResult } from './infer-response-v1.ts';
import { createRequestStatuses } from './request-status.ts';
import { buildServerStatus, type EndpointStats } from './server-status-v1.ts';
import type {
  InferRequestHeaderMsg,
  ModelRepositoryIndexMsg,
  RequestStatusMsg,
  ServerStatusMsg,
} from './v1-messages.ts';

/** v1's default server id (`--id`), which NV-Status and ServerStatus carry. */
export const DEFAULT_V1_SERVER_ID = 'inference:0';
/** Per-tensor element limit when none is given (the worker's MAX_TENSOR_ELEMENTS default). */
const DEFAULT_MAX_ELEMENTS = 1 << 26;

export interface TritonV1Options {
  /** ServerStatus.id and RequestStatus.server_id. Default `inference:0`. */
  serverId?: string;
  /**
   * `--strict-readiness` (seed 000): true (default) reports ready only while every model loaded at start is
   * loaded; false reports ready whenever the server is up and serving, whatever its models.
   */
  strictReadiness?: boolean;
  /** Largest element count of one input tensor, checked before anything is allocated. */
  maxElements?: number;
}

export interface V1InferCall {
  model: string;
  /** Absent: the latest ready version. */
  version?: string;
  header: InferRequestHeaderMsg;
  raw: V1RawInputs;
  /** The caller went away: the core drops the request if it is still queued. */
  signal?: AbortSignal;
}

/**
 * The Triton v1 API over the shared inference core, independent of transport: the HTTP routes and the v1 gRPC
 * service both call it, and render what it returns (or throws, as AppError) in their own wire forms.
 */
export interface TritonV1Service {
  readonly serverId: string;
  /** The RequestStatus of one answer: SUCCESS, or the error's code and message; each call takes a new request id. */
  requestStatus(err?: unknown): RequestStatusMsg;
  /** `live` or `ready` (per strictReadiness); anything else → INVALID_ARGUMENT. */
  health(mode: string): boolean;
  /** The whole ServerStatus, or one model's (NOT_FOUND for a model unknown to the server). */
  status(model?: string): Promise<ServerStatusMsg>;
  infer(call: V1InferCall): Promise<V1InferResult>;
  /** Load (or reload) / unload through the core's repository API. */
  modelControl(action: 'load' | 'unload', model: string): Promise<void>;
  repositoryIndex(): Promise<ModelRepositoryIndexMsg>;
}

/**
 * @example
 * const v1 = createTritonV1Service(core, { strictReadiness: false });
 * const status = await v1.status('simple'); // status.model_status.simple.version_status['1'].ready_state === 'MODEL_READY'
 */
export function createTritonV1Service(core: InferenceCore, opts: TritonV1Options = {}): TritonV1Service {
  const serverId = opts.serverId ?? DEFAULT_V1_SERVER_ID;
  const strict = opts.strictReadiness ?? true;
  const maxElements = opts.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const statuses = createRequestStatuses(serverId);
  const started = process.hrtime.bigint();
  const zero = (): StatDuration => ({ count: 0, ns: 0 });
  const endpoints: EndpointStats = { status: zero(), health: zero(), modelControl: zero(), repository: zero() };

  /** Runs `fn` and adds its duration to `stat` when it succeeds. */
  const timed = <T>(stat: StatDuration, fn: () => T): T => {
    const from = process.hrtime.bigint();
    const record = () => {
      stat.count++;
      stat.ns += Number(process.hrtime.bigint() - from);
    };
    const result = fn();
    if (result instanceof Promise) {
      return result.then((v: unknown) => {
        record();
        return v;
      }) as T;
    }
    record();
    return result;
  };

  return {
    serverId,
    requestStatus: (err) => statuses.of(err),

    health(mode) {
      if (mode !== 'live' && mode !== 'ready') {
        throw new AppError('INVALID_ARGUMENT', `unknown health mode '${mode}': expected 'live' or 'ready'`);
      }
      return timed(endpoints.health, () => {
        if (mode === 'live') return core.isLive();
        return strict ? core.isReady() : core.isLive() && core.serverState() === 'READY';
      });
    },

    status: (model) =>
      timed(endpoints.status, () =>
        buildServerStatus(core, { serverId, uptimeNs: Number(process.hrtime.bigint() - started), endpoints }, model),
      ),

    async infer(call) {
      ensureReady(core, call.model, call.version);
      const config = core.modelConfig(call.model, call.version);
      const model = { name: call.model, ...(call.version !== undefined ? { version: call.version } : {}) };
      const plan = decodeV1InferRequest(config, model, call.header, call.raw, maxElements);
      const res = await core.infer(call.signal ? { ...plan.request, signal: call.signal } : plan.request);
      return encodeV1InferResponse(plan, res);
    },

    modelControl: (action, model) =>
      timed(endpoints.modelControl, () => (action === 'load' ? core.loadModel(model) : core.unloadModel(model))),

    repositoryIndex: () =>
      timed(endpoints.repository, async () => {
        const names = new Set((await core.repositoryIndex()).map((e) => e.name));
        return { models: [...names].sort().map((name) => ({ name })) };
      }),
  };
}

/** v1 answers a model or version it cannot run with UNAVAILABLE, before looking at the request. */
function ensureReady(core: InferenceCore, model: string, version: string | undefined): void {
  if (core.isModelReady(model, version)) return;
  const known = core.isModelReady(model) || core.versionStates(model).length > 0;
  throw new AppError(
    'UNAVAILABLE',
    version === undefined || !known
      ? `Inference request for unknown model '${model}'`
      : `Inference request for unknown version ${version} of model '${model}'`,
  );
}
