import { readdir } from 'node:fs/promises';
import type { LoadedModel, SessionCache } from '@nvcf/models';
import {
  AppError,
  classify,
  type Tensor,
  type TensorSpec,
  unknownModelMessage,
  versionNotReadyMessage,
} from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import { defineModel, type ModelDefinition, readModelSource } from './config-source.ts';
import type {
  CoreInferRequest,
  CoreInferResponse,
  InferenceCore,
  ModelMetadata,
  RepositoryIndexEntry,
  VersionState,
} from './core-types.ts';
import { InstanceSlots } from './instance-slots.ts';
import { ModelStatistics } from './model-statistics.ts';

interface ServedVersion {
  version: string;
  model: LoadedModel;
  stats: ModelStatistics;
  slots: InstanceSlots;
}

interface ServedModel {
  definition: ModelDefinition;
  /** Numeric version order, newest last. */
  versions: Map<string, ServedVersion>;
}

export interface CoreOptions {
  repository: string;
  sessions: SessionCache;
  logger: Logger;
  serverVersion?: string;
}

const EXTENSIONS = ['classification', 'model_repository', 'model_configuration', 'binary_tensor_data', 'statistics'];
const now = () => process.hrtime.bigint();
/** Said wherever a config asks for dynamic batching, until the scheduler exists. */
export const DYNAMIC_BATCHING_NOTE =
  'accepted but not applied: requests run one at a time, each as the batch its client sent';
const ns = (from: bigint, to: bigint) => Number(to - from);

/**
 * The inference server's core: which models and versions are loaded, their configs, running a request
 * with statistics, and loading/unloading. Transport adapters sit on top; see core-types.ts.
 */
export type StartableCore = InferenceCore & { start(): Promise<void> };

export function createInferenceCore(opts: CoreOptions): StartableCore {
  const { sessions, logger } = opts;
  const models = new Map<string, ServedModel>();
  /** Why a model is not loaded (repository index `reason`). */
  const failed = new Map<string, string>();
  /** Models that failed at start: the server is not ready while any remains (Triton's strict readiness). */
  const startupFailures = new Set<string>();
  const transitions = new Map<string, 'LOADING' | 'UNLOADING'>();
  /** Versions a model served before and serves no more (unloaded, or dropped by a reload): v1 status shows them. */
  const retired = new Map<string, Set<string>>();
  const listeners: ((name: string) => void)[] = [];
  let started = false;
  let closing = false;

  const served = (name: string): ServedModel => {
    const m = models.get(name);
    if (!m) throw new AppError('INVALID_ARGUMENT', unknownModelMessage(name));
    return m;
  };

  const version = (name: string, v: string | undefined): ServedVersion => {
    const m = served(name);
    if (v === undefined || v === '') {
      const latest = [...m.versions.values()].at(-1);
      if (!latest) throw new AppError('UNAVAILABLE', `Request for unknown model: '${name}' has no available versions`);
      return latest;
    }
    const sv = m.versions.get(v);
    if (!sv) throw new AppError('UNAVAILABLE', versionNotReadyMessage(name, v));
    return sv;
  };

  const metadataShape = (def: ModelDefinition, dims: number[]) =>
    def.config.max_batch_size > 0 ? [-1, ...dims] : [...dims];

  async function load(name: string, configOverride?: string): Promise<void> {
    // A model name is one directory of the repository, never a path.
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(name)) {
      throw new AppError('INVALID_ARGUMENT', `failed to load '${name}': invalid model name`);
    }
    transitions.set(name, 'LOADING');
    try {
      const source = await readModelSource(opts.repository, name, configOverride);
      const sessionsLoaded: LoadedModel[] = [];
      for (const entry of source.entries) sessionsLoaded.push(await sessions.load(entry));
      const definition = await defineModel(source, sessionsLoaded);
      const loaded: ServedVersion[] = sessionsLoaded.map((model) => ({
        version: model.version,
        model,
        // A reload keeps a version's counters, as Triton's do.
        stats: models.get(name)?.versions.get(model.version)?.stats ?? new ModelStatistics(name, model.version),
        slots: new InstanceSlots(definition.instanceCount),
      }));
      const previous = models.get(name);
      models.set(name, { definition, versions: new Map(loaded.map((l) => [l.version, l])) });
      failed.delete(name);
      startupFailures.delete(name);
      const gone = retired.get(name) ?? new Set<string>();
      for (const l of loaded) gone.delete(l.version);
      for (const old of previous?.versions.keys() ?? []) {
        if (!loaded.some((l) => l.version === old)) {
          gone.add(old);
          await sessions.unload(name, old);
        }
      }
      if (gone.size) retired.set(name, gone);
      else retired.delete(name);
      logger.info({ model: name, versions: loaded.map((l) => l.version) }, 'model loaded');
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      // A failed reload leaves the model serving its previous versions.
      if (!models.has(name)) failed.set(name, reason);
      const message = reason.startsWith(`failed to load '${name}'`) ? reason : `failed to load '${name}': ${reason}`;
      throw err instanceof AppError && err.code === 'INVALID_ARGUMENT'
        ? new AppError('INVALID_ARGUMENT', err.message)
        : new AppError('INTERNAL', message, { cause: err });
    } finally {
      transitions.delete(name);
    }
    for (const l of listeners) l(name);
  }

  const core: StartableCore = {
    serverName: 'triton',
    serverVersion: opts.serverVersion ?? '2.59.0',
    extensions: EXTENSIONS,

    async start() {
      const names = (await readdir(opts.repository, { withFileTypes: true }))
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => d.name)
        .sort();
      for (const name of names) {
        await load(name).catch((err: unknown) => {
          startupFailures.add(name);
          logger.error({ err, model: name }, 'model failed to load');
        });
      }
      started = true;
    },

    isLive: () => true,
    isReady: () => started && startupFailures.size === 0,
    serverState: () => (closing ? 'EXITING' : started ? 'READY' : 'INITIALIZING'),

    modelMetadata(name, v): ModelMetadata {
      const m = served(name);
      version(name, v);
      const { config } = m.definition;
      return {
        name,
        versions: [...m.versions.keys()],
        platform: config.platform,
        inputs: m.definition.inputs.map((t) => ({ ...t, shape: metadataShape(m.definition, t.shape) })),
        outputs: m.definition.outputs.map((t) => ({ ...t, shape: metadataShape(m.definition, t.shape) })),
        ...(config.dynamic_batching ? { properties: { dynamic_batching: DYNAMIC_BATCHING_NOTE } } : {}),
      };
    },

    isModelReady(name, v) {
      const m = models.get(name);
      if (!m) return false;
      return v === undefined || v === '' ? m.versions.size > 0 : m.versions.has(v);
    },

    modelConfig(name, v) {
      version(name, v);
      return served(name).definition.config;
    },

    modelBatches: (name) => served(name).definition.config.max_batch_size > 0,

    singleInput(name, v) {
      const sv = version(name, v);
      const only = sv.model.inputs.length === 1 ? sv.model.inputs[0] : undefined;
      return only ? { ...only } : undefined;
    },

    async infer(req: CoreInferRequest): Promise<CoreInferResponse> {
      const arrived = now();
      const sv = version(req.modelName, req.modelVersion);
      const def = served(req.modelName).definition;
      sv.stats.started();
      let queued = arrived;
      let batch: number | undefined;
      try {
        batch = batchSize(def, req.inputs, req.modelName);
        await sv.slots.acquire();
        queued = now();
        try {
          if (req.signal?.aborted) throw new AppError('CANCELLED', 'request cancelled before it ran');
          const names = req.outputs?.map((o) => o.name);
          const inferStart = now();
          const outputs = await sv.model.run(req.inputs, names);
          const inferEnd = now();
          const shaped = outputs.map((t, i) => postProcess(def, t, req.outputs?.[i]?.classification));
          const done = now();
          sv.stats.succeeded(batch, {
            queueNs: ns(arrived, queued),
            computeInputNs: ns(queued, inferStart),
            computeInferNs: ns(inferStart, inferEnd),
            computeOutputNs: ns(inferEnd, done),
            totalNs: ns(arrived, done),
          });
          return {
            modelName: req.modelName,
            modelVersion: sv.version,
            ...(req.id !== undefined ? { id: req.id } : {}),
            outputs: shaped,
          };
        } finally {
          sv.slots.release();
        }
      } catch (err) {
        // A request the model refused is OTHER; anything that broke inside the run is BACKEND.
        const code = err instanceof AppError ? err.code : 'INTERNAL';
        const reason = code === 'INVALID_ARGUMENT' ? 'OTHER' : code === 'CANCELLED' ? 'CANCELED' : 'BACKEND';
        sv.stats.failed(ns(arrived, now()), reason, batch);
        throw err;
      }
    },

    statistics(name, v) {
      if (name === undefined || name === '') {
        return [...models.values()].flatMap((m) => [...m.versions.values()].map((sv) => sv.stats.snapshot()));
      }
      const m = served(name);
      if (v === undefined || v === '') return [...m.versions.values()].map((sv) => sv.stats.snapshot());
      return [version(name, v).stats.snapshot()];
    },

    async repositoryIndex(o = {}) {
      const names = (await readdir(opts.repository, { withFileTypes: true }))
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => d.name)
        .sort();
      const out: RepositoryIndexEntry[] = [];
      for (const name of names) {
        const m = models.get(name);
        const transition = transitions.get(name);
        if (m && m.versions.size > 0) {
          for (const v of m.versions.keys()) out.push({ name, version: v, state: transition ?? 'READY', reason: '' });
        } else if (!o.readyOnly) {
          out.push({ name, state: transition ?? 'UNAVAILABLE', reason: failed.get(name) ?? 'unloaded' });
        }
      }
      return out;
    },

    versionStates(name) {
      const transition = transitions.get(name);
      const out: VersionState[] = [...(models.get(name)?.versions.keys() ?? [])].map((version) => ({
        version,
        state: transition ?? 'READY',
        reason: '',
      }));
      for (const version of retired.get(name) ?? []) {
        out.push({ version, state: transition ?? 'UNAVAILABLE', reason: failed.get(name) ?? 'unloaded' });
      }
      return out.sort((a, b) => Number(a.version) - Number(b.version));
    },

    loadModel: (name, o) => load(name, o?.configOverride),

    async unloadModel(name) {
      const m = models.get(name);
      failed.delete(name);
      startupFailures.delete(name);
      if (!m) return;
      transitions.set(name, 'UNLOADING');
      try {
        models.delete(name);
        retired.set(name, new Set([...(retired.get(name) ?? []), ...m.versions.keys()]));
        for (const v of m.versions.keys()) await sessions.unload(name, v);
        logger.info({ model: name }, 'model unloaded');
      } finally {
        transitions.delete(name);
      }
      for (const l of listeners) l(name);
    },

    servedVersions() {
      return [...models.values()].flatMap((m) => [...m.versions.values()].map((sv) => sv.stats));
    },

    onChange(listener) {
      listeners.push(listener);
    },

    async close() {
      closing = true;
      models.clear();
      await sessions.close();
    },
  };
  return core;
}

/** The request's batch size: the first dimension when the model batches (checked against max_batch_size). */
function batchSize(def: ModelDefinition, inputs: Tensor[], model: string): number {
  const max = def.config.max_batch_size;
  if (max === 0) return 1;
  const first = inputs[0]?.shape[0] ?? 1;
  if (first > max) {
    throw new AppError('INVALID_ARGUMENT', `inference request batch-size must be <= ${max} for '${model}'`);
  }
  return first;
}

/** Applies the classification extension to an output when the request asked for it. */
function postProcess(def: ModelDefinition, tensor: Tensor, classCount: number | undefined): Tensor {
  if (classCount === undefined) return tensor;
  return classify(tensor, classCount, {
    batching: def.config.max_batch_size > 0,
    labels: def.labels.get(tensor.name),
  });
}

export type { TensorSpec };
