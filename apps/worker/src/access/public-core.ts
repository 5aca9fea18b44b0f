import type { InferenceCore } from '@nvcf/inference-server';
import { AppError, unknownModelError } from '@nvcf/protocol';
import { isFunctionModelName } from '@nvcf/storage';

/** Triton's `--model-control-mode`: `none` refuses load/unload over the network, `explicit` allows them. */
export const MODEL_CONTROL_MODES = ['none', 'explicit'] as const;
export type ModelControlMode = (typeof MODEL_CONTROL_MODES)[number];

/**
 * What Triton answers (UNAVAILABLE) for a load or unload when model control is not explicit: the same words
 * in `none` and `poll` mode, so clients that match them keep working.
 */
const MODEL_CONTROL_DISABLED_MESSAGE = 'explicit model load / unload is not allowed if polling is enabled';

export interface SurfacePolicy {
  /** Default `none`: no load or unload through any surface. */
  modelControl?: ModelControlMode;
  /**
   * Default false: models the worker loaded for deployed NVCF function versions (`fv-<versionId>`) are
   * private to their function, so the network surfaces treat them as unknown; only queue jobs, which the
   * gateway has authorized, run them.
   */
  exposeFunctionModels?: boolean;
}

/**
 * The core as the worker's HTTP, gRPC and Triton v1 surfaces may use it: load and unload only in explicit
 * model-control mode, and private function models answered exactly as models that do not exist (so the
 * answer does not even say whether one is loaded). The queue processor uses the core itself.
 *
 * @example
 * const surfaces = createPublicCore(core, { modelControl: 'none' });
 * await surfaces.unloadModel('simple'); // throws UNAVAILABLE, MODEL_CONTROL_DISABLED_MESSAGE
 */
export function createPublicCore(core: InferenceCore, policy: SurfacePolicy = {}): InferenceCore {
  const explicit = policy.modelControl === 'explicit';
  const hidden = (name: string | undefined) =>
    !policy.exposeFunctionModels && name !== undefined && isFunctionModelName(name);
  const visible = (name: string) => {
    if (hidden(name)) throw unknownModelError(name);
    return name;
  };
  const control = (name: string) => {
    if (!explicit) throw new AppError('UNAVAILABLE', MODEL_CONTROL_DISABLED_MESSAGE);
    return visible(name);
  };

  return {
    serverName: core.serverName,
    serverVersion: core.serverVersion,
    extensions: core.extensions,
    isLive: () => core.isLive(),
    isReady: () => core.isReady(),
    serverState: () => core.serverState(),
    modelMetadata: (name, version) => core.modelMetadata(visible(name), version),
    isModelReady: (name, version) => !hidden(name) && core.isModelReady(name, version),
    modelConfig: (name, version) => core.modelConfig(visible(name), version),
    modelBatches: (name) => core.modelBatches(visible(name)),
    singleInput: (name, version) => core.singleInput(visible(name), version),
    infer: async (request) => core.infer({ ...request, modelName: visible(request.modelName) }),
    isDecoupled: (name, version) => !hidden(name) && core.isDecoupled(name, version),
    inferDecoupled: async (request, onResponse) =>
      core.inferDecoupled({ ...request, modelName: visible(request.modelName) }, onResponse),
    statistics: (name, version) =>
      name === undefined || name === ''
        ? core.statistics(name, version).filter((s) => !hidden(s.name))
        : core.statistics(visible(name), version),
    repositoryIndex: async (opts) => (await core.repositoryIndex(opts)).filter((e) => !hidden(e.name)),
    versionStates: (name) => (hidden(name) ? [] : core.versionStates(name)),
    loadModel: async (name, opts) => core.loadModel(control(name), opts),
    unloadModel: async (name) => core.unloadModel(control(name)),
    servedVersions: () => core.servedVersions().filter((s) => !hidden(s.name)),
    onChange: (listener) => core.onChange(listener),
    close: () => core.close(),
  };
}
