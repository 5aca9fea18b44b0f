import { modelConfigToProto } from '@nvcf/models';
import { AppError } from '@nvcf/protocol';
import type { InferenceCore, ModelState, ServerState } from '../core/core-types.ts';
import type { BatchSizeStats, StatDuration } from '../core/model-statistics.ts';
import type {
  InferRequestStatsMsg,
  ModelReadyState,
  ModelStatusMsg,
  ModelVersionStatusMsg,
  ServerReadyState,
  ServerStatusMsg,
  StatDurationMsg,
} from './v1-messages.ts';

const MODEL_STATE: Readonly<Record<ModelState, ModelReadyState>> = {
  READY: 'MODEL_READY',
  UNAVAILABLE: 'MODEL_UNAVAILABLE',
  LOADING: 'MODEL_LOADING',
  UNLOADING: 'MODEL_UNLOADING',
};

const SERVER_STATE: Readonly<Record<ServerState, ServerReadyState>> = {
  INITIALIZING: 'SERVER_INITIALIZING',
  READY: 'SERVER_READY',
  EXITING: 'SERVER_EXITING',
};

/** `success` durations of the v1 endpoints other than infer (ServerStatus `*_stats`). */
export interface EndpointStats {
  status: StatDuration;
  health: StatDuration;
  modelControl: StatDuration;
  repository: StatDuration;
}

export interface ServerStatusSource {
  serverId: string;
  /** Nanoseconds since the server started. */
  uptimeNs: number;
  endpoints: EndpointStats;
}

const duration = (d: StatDuration): StatDurationMsg => ({ count: d.count, total_time_ns: d.ns });
const success = (d: StatDuration) => ({ success: duration(d) });

/**
 * The v1 ServerStatus (TRTIS 1.x protos: server_status.proto) from the shared core: each model's ModelConfig (the one
 * `GET /v2/models/{m}/config` serves), its versions' ready states (with the reason when not ready), and per
 * version the v2 counters plus per-batch-size `infer_stats`. Models of the repository that are not loaded are
 * listed with what is known of them: no config, and the versions they served before, if any.
 *
 * @throws AppError NOT_FOUND for `model` unknown to both the repository and the core.
 */
export async function buildServerStatus(
  core: InferenceCore,
  source: ServerStatusSource,
  model?: string,
): Promise<ServerStatusMsg> {
  const names = new Set((await core.repositoryIndex()).map((e) => e.name));
  for (const stats of core.servedVersions()) names.add(stats.name);
  if (model !== undefined && !names.has(model)) {
    throw new AppError('NOT_FOUND', `no status available for unknown model '${model}'`);
  }
  const model_status: Record<string, ModelStatusMsg> = {};
  for (const name of model === undefined ? [...names].sort() : [model]) model_status[name] = modelStatus(core, name);
  return {
    id: source.serverId,
    version: core.serverVersion,
    uptime_ns: source.uptimeNs,
    model_status,
    status_stats: success(source.endpoints.status),
    ready_state: SERVER_STATE[core.serverState()],
    health_stats: success(source.endpoints.health),
    model_control_stats: success(source.endpoints.modelControl),
    shm_control_stats: success({ count: 0, ns: 0 }),
    repository_stats: success(source.endpoints.repository),
  };
}

function modelStatus(core: InferenceCore, name: string): ModelStatusMsg {
  const live = new Map(
    core
      .servedVersions()
      .filter((s) => s.name === name)
      .map((s) => [s.version, s]),
  );
  const version_status: Record<string, ModelVersionStatusMsg> = {};
  for (const v of core.versionStates(name)) {
    const entry: ModelVersionStatusMsg = { ready_state: MODEL_STATE[v.state] };
    if (v.state !== 'READY' && v.reason) entry.ready_state_reason = { message: v.reason };
    const stats = live.get(v.version);
    if (stats) {
      const snap = stats.snapshot();
      entry.infer_stats = Object.fromEntries(stats.batchSizeStats().map((b) => [String(b.batch_size), inferStats(b)]));
      entry.model_execution_count = snap.execution_count;
      entry.model_inference_count = snap.inference_count;
      entry.last_inference_timestamp_milliseconds = snap.last_inference;
    }
    version_status[v.version] = entry;
  }
  const status: ModelStatusMsg = { version_status };
  if (core.isModelReady(name)) status.config = modelConfigToProto(core.modelConfig(name));
  return status;
}

function inferStats(b: BatchSizeStats): InferRequestStatsMsg {
  // compute = the three compute phases of each successful request.
  const compute = {
    count: b.compute_infer.count,
    ns: b.compute_input.ns + b.compute_infer.ns + b.compute_output.ns,
  };
  return {
    success: duration(b.success),
    failed: duration(b.fail),
    compute: duration(compute),
    queue: duration(b.queue),
    compute_input: duration(b.compute_input),
    compute_infer: duration(b.compute_infer),
    compute_output: duration(b.compute_output),
  };
}
