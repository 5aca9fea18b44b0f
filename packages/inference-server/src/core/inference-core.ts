import { readdir } from 'node:fs/promises';
import { sequenceBatchingOf } from '@nvcf/models';
import {
  AppError,
  classify,
  type Tensor,
  type TensorSpec,
  unknownModelMessage,
  versionNotReadyMessage,
} from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { Tracer } from '@opentelemetry/api';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import type { SessionCache } from '../runtime/session-cache.ts';
import { defineModel, type ModelDefinition, readModelSource } from './config-source.ts';
import type {
  CoreInferRequest,
  CoreInferResponse,
  InferenceCore,
  ModelMetadata,
  RepositoryIndexEntry,
  VersionState,
} from './core-types.ts';
import { type BatchedAnswer, DynamicBatcher, QueueRejection } from './dynamic-batcher.ts';
import { InstanceSlots } from './instance-slots.ts';
import { ModelStatistics } from './model-statistics.ts';
import { traceDecoupledRun, traceRun } from './run-span.ts';
import { SequenceScheduler, type SequenceTicket } from './sequence-scheduler.ts';

interface ServedVersion {
  version: string;
  model: LoadedModel;
  stats: ModelStatistics;
  slots: InstanceSlots;
  /** Present when the config asks for dynamic batching (and the model batches). */
  batcher: DynamicBatcher | undefined;
  /** Present when the config asks for sequence batching: it orders a sequence's requests, feeds controls and state. */
  sequences: SequenceScheduler | undefined;
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
const now = () => process.hrtime.bigint();
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
      // A GPU session per core would multiply device memory for nothing: one instance there, as Triton's one per GPU.
      const onCpu = sessionsLoaded.every((m) => m.provider === 'cpu');
      const definition = await defineModel(source, sessionsLoaded, { cpuInstances: onCpu ? opts.cpuInstances : 1 });
      // Each instance_group instance is a thread with its own session (Triton's model instances).
      for (const m of sessionsLoaded) await sessions.scale(name, m.version, definition.instanceCount);
      const loaded: ServedVersion[] = sessionsLoaded.map((model) => {
        // A reload keeps a version's counters, as Triton's do.
        const stats = models.get(name)?.versions.get(model.version)?.stats ?? new ModelStatistics(name, model.version);
        const slots = new InstanceSlots(definition.instanceCount);
        const sequencing = sequenceBatchingOf(definition.config);
        const sequences = sequencing
          ? new SequenceScheduler(name, sequencing, definition.config.max_batch_size > 0)
          : undefined;
        return {
          version: model.version,
          model,
          stats,
          slots,
          batcher: batcherFor(definition, model, slots, stats),
          sequences,
        };
      });
      const previous = models.get(name);
      models.set(name, { definition, versions: new Map(loaded.map((l) => [l.version, l])) });
      failed.delete(name);
      startupFailures.delete(name);
      const gone = retired.get(name) ?? new Set<string>();
      for (const l of loaded) gone.delete(l.version);
      for (const [old, oldServed] of previous?.versions ?? []) {
        if (loaded.some((l) => l.version === old)) {
          // The version goes on serving: what its old batcher queued runs now rather than failing.
          oldServed.batcher?.drain();
        } else {
          gone.add(old);
          oldServed.batcher?.close(unloadedMessage(name, old));
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

    // Unknown models are not decoupled: the call that follows reports them in its own words.
    isDecoupled: (name, v) => {
      const m = models.get(name);
      return m !== undefined && (v === undefined || v === '' || m.versions.has(v)) && decoupled(m.definition);
    },

    async inferDecoupled(req, onResponse) {
      const sv = version(req.modelName, req.modelVersion);
      const def = served(req.modelName).definition;
      const run = sv.model.runDecoupled?.bind(sv.model);
      if (!decoupled(def) || !run) {
        onResponse(await core.infer(req));
        return;
      }
      const arrived = now();
      sv.stats.started();
      await sv.slots.acquire();
      const queued = now();
      try {
        if (req.signal?.aborted) throw new AppError('CANCELLED', 'request cancelled before it ran');
        await traceDecoupledRun(opts.tracer, { model: req.modelName, version: sv.version }, (responded) =>
          run(
            req.inputs,
            (outputs) => {
              responded();
              onResponse({
                modelName: req.modelName,
                modelVersion: sv.version,
                ...(req.id !== undefined ? { id: req.id } : {}),
                outputs,
              });
            },
            req.signal,
          ),
        );
        const done = now();
        const timings = {
          queueNs: ns(arrived, queued),
          computeInputNs: 0,
          computeInferNs: ns(queued, done),
          computeOutputNs: 0,
          totalNs: ns(arrived, done),
        };
        sv.stats.executed(1, timings);
        sv.stats.succeeded(1, timings);
      } catch (err) {
        sv.stats.failed(
          ns(arrived, now()),
          err instanceof AppError && err.code === 'INVALID_ARGUMENT' ? 'OTHER' : 'BACKEND',
          1,
        );
        throw err;
      } finally {
        sv.slots.release();
      }
    },

    async infer(req: CoreInferRequest): Promise<CoreInferResponse> {
      const arrived = now();
      const sv = version(req.modelName, req.modelVersion);
      const def = served(req.modelName).definition;
      if (decoupled(def)) {
        throw new AppError(
          'UNIMPLEMENTED',
          `model '${req.modelName}' is decoupled (it answers with a stream of responses): use a streaming call`,
        );
      }
      sv.stats.started();
      let batch: number | undefined;
      let ticket: SequenceTicket | undefined;
      try {
        batch = batchSize(def, req.inputs, req.modelName);
        ticket = sv.sequences?.admit(req.parameters, batch);
        if (ticket) {
          // One request of a sequence at a time, in order: its state is what the previous one left.
          await ticket.turn;
          // The control and state inputs join the request's own (the client never sends them).
          req = { ...req, inputs: [...req.inputs, ...ticket.inputs()] };
        }
        const requested = req.outputs?.map((o) => o.name);
        // State outputs are fetched too (after the requested ones, so indexes line up), then kept, not answered.
        const outputNames =
          ticket?.stateOutputs.length && requested ? [...requested, ...ticket.stateOutputs] : requested;
        const { batcher } = sv;
        const rows = batch;
        const facts = { model: req.modelName, version: sv.version, rows, batched: batcher !== undefined };
        const ran = await traceRun(opts.tracer, facts, (span) =>
          batcher
            ? batcher.submit({
                inputs: req.inputs,
                rows,
                outputNames,
                timeoutUs: timeoutUs(req.parameters),
                signal: req.signal,
                owned: req.inputsOwned === true,
                ...(span ? { span } : {}),
              })
            : runAlone(sv, req, rows, outputNames),
        );
        ticket?.keep(ran.outputs);
        const stateOutputs = ticket?.stateOutputs ?? [];
        const answered = stateOutputs.length ? ran.outputs.filter((t) => !stateOutputs.includes(t.name)) : ran.outputs;
        const postStart = now();
        const shaped = answered.map((t, i) => postProcess(def, t, req.outputs?.[i]?.classification));
        const done = now();
        const timings = {
          queueNs: ran.queueNs,
          computeInputNs: ran.computeInputNs,
          computeInferNs: ran.computeInferNs,
          computeOutputNs: ran.computeOutputNs + ns(postStart, done),
          totalNs: ns(arrived, done),
        };
        // The batcher reports its executions itself; alone, this request was one.
        if (!sv.batcher) sv.stats.executed(batch, timings);
        sv.stats.succeeded(batch, timings);
        return {
          modelName: req.modelName,
          modelVersion: sv.version,
          ...(req.id !== undefined ? { id: req.id } : {}),
          outputs: shaped,
        };
      } catch (err) {
        // Turned away by the scheduler is REJECTED; refused by the model is OTHER; broken inside the run, BACKEND.
        const code = err instanceof AppError ? err.code : 'INTERNAL';
        const reason =
          err instanceof QueueRejection
            ? 'REJECTED'
            : code === 'INVALID_ARGUMENT'
              ? 'OTHER'
              : code === 'CANCELLED'
                ? 'CANCELED'
                : 'BACKEND';
        sv.stats.failed(ns(arrived, now()), reason, batch);
        throw err;
      } finally {
        ticket?.done();
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
        for (const [v, sv] of m.versions) sv.batcher?.close(unloadedMessage(name, v));
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
      for (const [name, m] of models) {
        for (const [v, sv] of m.versions) sv.batcher?.close(unloadedMessage(name, v));
      }
      models.clear();
      await sessions.close();
    },
  };
  return core;
}

const unloadedMessage = (name: string, v: string) => `model '${name}' version ${v} is unloaded`;

/** Triton's `timeout` request parameter, in microseconds; anything but a non-negative integer is ignored. */
function timeoutUs(parameters: Record<string, unknown> | undefined): number | undefined {
  const t = parameters?.timeout;
  if (typeof t === 'bigint') return t >= 0n ? Number(t) : undefined;
  return typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 ? t : undefined;
}

/** The version's dynamic batcher, when its config asks for one and the model batches. */
function batcherFor(
  def: ModelDefinition,
  model: LoadedModel,
  slots: InstanceSlots,
  stats: ModelStatistics,
): DynamicBatcher | undefined {
  const config = def.config.dynamic_batching;
  if (!config || def.config.max_batch_size <= 0) return undefined;
  return new DynamicBatcher({
    maxBatchSize: def.config.max_batch_size,
    config,
    inputs: model.inputs,
    slots,
    run: (inputs, outputNames, owned) => model.run(inputs, outputNames, { moveInputs: owned }),
    onExecution: (e) => {
      if (e.ok) stats.executed(e.batchSize, e);
    },
  });
}

/** A request run as its own execution on an instance slot (no dynamic batching). */
async function runAlone(
  sv: ServedVersion,
  req: CoreInferRequest,
  rows: number,
  outputNames: string[] | undefined,
): Promise<BatchedAnswer> {
  const arrived = now();
  await sv.slots.acquire();
  const queued = now();
  try {
    if (req.signal?.aborted) throw new AppError('CANCELLED', 'request cancelled before it ran');
    const outputs = await sv.model.run(req.inputs, outputNames, { moveInputs: req.inputsOwned === true });
    const ran = now();
    return {
      outputs,
      batchSize: rows,
      queueNs: ns(arrived, queued),
      computeInputNs: 0,
      computeInferNs: ns(queued, ran),
      computeOutputNs: 0,
    };
  } finally {
    sv.slots.release();
  }
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

/** Triton's decoupled transaction policy: one request, any number of responses. */
function decoupled(def: ModelDefinition): boolean {
  return (def.config.extra.model_transaction_policy as { decoupled?: boolean } | undefined)?.decoupled === true;
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
