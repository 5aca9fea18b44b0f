import { readdir } from 'node:fs/promises';
import type { ModelConfig } from '@nvcf/models';
import { AppError, type TensorSpec, unknownModelMessage, versionNotReadyMessage } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import type { SessionCache } from '../runtime/session-cache.ts';
import { defineModel, type ModelDefinition, readModelSource } from './config-source.ts';
import type { ModelMetadata, RepositoryIndexEntry, VersionState } from './core-types.ts';
import { ModelStatistics } from './model-statistics.ts';
import { decoupled, type ServedModel, type ServedVersion, serveVersion, unloadedMessage } from './served-model.ts';

export interface RepositoryOptions {
  repository: string;
  sessions: SessionCache;
  logger: Logger;
  /** Instances of a model whose config names no instance count (Triton's ONNX Runtime default: 2). */
  cpuInstances?: number;
}

/** A model name is one directory of the repository, never a path. */
const MODEL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * Which models exist and where each is in its life (Triton's model repository manager): loading, reloading and
 * unloading them, their configs and metadata, their versions' states, and the repository index. The versions it
 * serves carry what runs them (see served-model.ts); the executor runs requests on them.
 */
export class ModelRepository {
  readonly #opts: RepositoryOptions;
  readonly #models = new Map<string, ServedModel>();
  /** Why a model is not loaded (repository index `reason`). */
  readonly #failed = new Map<string, string>();
  /** Models that failed at start: the server is not ready while any remains (Triton's strict readiness). */
  readonly #startupFailures = new Set<string>();
  readonly #transitions = new Map<string, 'LOADING' | 'UNLOADING'>();
  /** Versions a model served before and serves no more (unloaded, or dropped by a reload): v1 status shows them. */
  readonly #retired = new Map<string, Set<string>>();
  readonly #listeners: ((name: string) => void)[] = [];

  constructor(opts: RepositoryOptions) {
    this.#opts = opts;
  }

  /** Loads every model of the repository; one that fails is logged and keeps the server not ready. */
  async loadAll(): Promise<void> {
    for (const name of await modelDirectories(this.#opts.repository)) {
      await this.load(name).catch((err: unknown) => {
        this.#startupFailures.add(name);
        this.#opts.logger.error({ err, model: name }, 'model failed to load');
      });
    }
  }

  /** Whether every model that failed at start has since loaded or been unloaded. */
  startupSucceeded(): boolean {
    return this.#startupFailures.size === 0;
  }

  /** The loaded model; an unknown one is INVALID_ARGUMENT. */
  served(name: string): ServedModel {
    const m = this.#models.get(name);
    if (!m) throw new AppError('INVALID_ARGUMENT', unknownModelMessage(name));
    return m;
  }

  /** The version asked for, or the latest when none is; one not loaded is UNAVAILABLE. */
  version(name: string, v: string | undefined): ServedVersion {
    const m = this.served(name);
    if (v === undefined || v === '') {
      const latest = [...m.versions.values()].at(-1);
      if (!latest) throw new AppError('UNAVAILABLE', `Request for unknown model: '${name}' has no available versions`);
      return latest;
    }
    const sv = m.versions.get(v);
    if (!sv) throw new AppError('UNAVAILABLE', versionNotReadyMessage(name, v));
    return sv;
  }

  /** Every loaded version of every model. */
  loadedVersions(): ServedVersion[] {
    return [...this.#models.values()].flatMap((m) => [...m.versions.values()]);
  }

  modelMetadata(name: string, v?: string): ModelMetadata {
    const m = this.served(name);
    this.version(name, v);
    const { config } = m.definition;
    return {
      name,
      versions: [...m.versions.keys()],
      platform: config.platform,
      inputs: m.definition.inputs.map((t) => ({ ...t, shape: metadataShape(m.definition, t.shape) })),
      outputs: m.definition.outputs.map((t) => ({ ...t, shape: metadataShape(m.definition, t.shape) })),
    };
  }

  isModelReady(name: string, v?: string): boolean {
    const m = this.#models.get(name);
    if (!m) return false;
    return v === undefined || v === '' ? m.versions.size > 0 : m.versions.has(v);
  }

  modelConfig(name: string, v?: string): ModelConfig {
    this.version(name, v);
    return this.served(name).definition.config;
  }

  modelBatches(name: string): boolean {
    return this.served(name).definition.config.max_batch_size > 0;
  }

  singleInput(name: string, v?: string): TensorSpec | undefined {
    const sv = this.version(name, v);
    const only = sv.model.inputs.length === 1 ? sv.model.inputs[0] : undefined;
    return only ? { ...only } : undefined;
  }

  // Unknown models are not decoupled: the call that follows reports them in its own words.
  isDecoupled(name: string, v?: string): boolean {
    const m = this.#models.get(name);
    return m !== undefined && (v === undefined || v === '' || m.versions.has(v)) && decoupled(m.definition);
  }

  async repositoryIndex(o: { readyOnly?: boolean } = {}): Promise<RepositoryIndexEntry[]> {
    const names = await modelDirectories(this.#opts.repository);
    const out: RepositoryIndexEntry[] = [];
    for (const name of names) {
      const m = this.#models.get(name);
      const transition = this.#transitions.get(name);
      if (m && m.versions.size > 0) {
        for (const v of m.versions.keys()) out.push({ name, version: v, state: transition ?? 'READY', reason: '' });
      } else if (!o.readyOnly) {
        out.push({ name, state: transition ?? 'UNAVAILABLE', reason: this.#failed.get(name) ?? 'unloaded' });
      }
    }
    return out;
  }

  versionStates(name: string): VersionState[] {
    const transition = this.#transitions.get(name);
    const out: VersionState[] = [...(this.#models.get(name)?.versions.keys() ?? [])].map((version) => ({
      version,
      state: transition ?? 'READY',
      reason: '',
    }));
    for (const version of this.#retired.get(name) ?? []) {
      out.push({ version, state: transition ?? 'UNAVAILABLE', reason: this.#failed.get(name) ?? 'unloaded' });
    }
    return out.sort((a, b) => Number(a.version) - Number(b.version));
  }

  /** Loads (or reloads) every version the model's version policy selects. */
  async load(name: string, configOverride?: string): Promise<void> {
    if (!MODEL_NAME.test(name)) {
      throw new AppError('INVALID_ARGUMENT', `failed to load '${name}': invalid model name`);
    }
    this.#transitions.set(name, 'LOADING');
    try {
      const { definition, loaded } = await this.#open(name, configOverride);
      await this.#install(name, definition, loaded);
      this.#opts.logger.info({ model: name, versions: loaded.map((l) => l.version) }, 'model loaded');
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      // A failed reload leaves the model serving its previous versions.
      if (!this.#models.has(name)) this.#failed.set(name, reason);
      throw loadFailure(name, reason, err);
    } finally {
      this.#transitions.delete(name);
    }
    this.#notify(name);
  }

  async unload(name: string): Promise<void> {
    const m = this.#models.get(name);
    this.#failed.delete(name);
    this.#startupFailures.delete(name);
    if (!m) return;
    this.#transitions.set(name, 'UNLOADING');
    try {
      this.#models.delete(name);
      for (const [v, sv] of m.versions) sv.batcher?.close(unloadedMessage(name, v));
      this.#retired.set(name, new Set([...(this.#retired.get(name) ?? []), ...m.versions.keys()]));
      for (const v of m.versions.keys()) await this.#opts.sessions.unload(name, v);
      this.#opts.logger.info({ model: name }, 'model unloaded');
    } finally {
      this.#transitions.delete(name);
    }
    this.#notify(name);
  }

  onChange(listener: (name: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Fails what the batchers hold, forgets every model and closes their sessions. */
  async close(): Promise<void> {
    for (const [name, m] of this.#models) {
      for (const [v, sv] of m.versions) sv.batcher?.close(unloadedMessage(name, v));
    }
    this.#models.clear();
    await this.#opts.sessions.close();
  }

  /** Reads the model's config and opens its versions' sessions, an instance each per instance_group count. */
  async #open(name: string, configOverride: string | undefined) {
    const { sessions } = this.#opts;
    const source = await readModelSource(this.#opts.repository, name, configOverride);
    const sessionsLoaded: LoadedModel[] = [];
    for (const entry of source.entries) sessionsLoaded.push(await sessions.load(entry));
    // A GPU session per core would multiply device memory for nothing: one instance there, as Triton's one per GPU.
    const onCpu = sessionsLoaded.every((m) => m.provider === 'cpu');
    const definition = await defineModel(source, sessionsLoaded, { cpuInstances: onCpu ? this.#opts.cpuInstances : 1 });
    // Each instance_group instance is a thread with its own session (Triton's model instances).
    for (const m of sessionsLoaded) await sessions.scale(name, m.version, definition.instanceCount);
    const loaded = sessionsLoaded.map((model) => {
      // A reload keeps a version's counters, as Triton's do.
      const stats =
        this.#models.get(name)?.versions.get(model.version)?.stats ?? new ModelStatistics(name, model.version);
      return serveVersion(name, definition, model, stats);
    });
    return { definition, loaded };
  }

  /** Puts the loaded versions in service, and retires the previous ones they do not replace. */
  async #install(name: string, definition: ModelDefinition, loaded: ServedVersion[]): Promise<void> {
    const previous = this.#models.get(name);
    this.#models.set(name, { definition, versions: new Map(loaded.map((l) => [l.version, l])) });
    this.#failed.delete(name);
    this.#startupFailures.delete(name);
    const gone = this.#retired.get(name) ?? new Set<string>();
    for (const l of loaded) gone.delete(l.version);
    for (const [old, oldServed] of previous?.versions ?? []) {
      if (loaded.some((l) => l.version === old)) {
        // The version goes on serving: what its old batcher queued runs now rather than failing.
        oldServed.batcher?.drain();
      } else {
        gone.add(old);
        oldServed.batcher?.close(unloadedMessage(name, old));
        await this.#opts.sessions.unload(name, old);
      }
    }
    if (gone.size) this.#retired.set(name, gone);
    else this.#retired.delete(name);
  }

  #notify(name: string): void {
    for (const l of this.#listeners) l(name);
  }
}

/** The repository's model directories, sorted (hidden ones are not models). */
async function modelDirectories(repository: string): Promise<string[]> {
  return (await readdir(repository, { withFileTypes: true }))
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name)
    .sort();
}

const metadataShape = (def: ModelDefinition, dims: number[]) =>
  def.config.max_batch_size > 0 ? [-1, ...dims] : [...dims];

/** A load failure as the API reports it: `failed to load '<m>'…`, INVALID_ARGUMENT kept, anything else INTERNAL. */
function loadFailure(name: string, reason: string, err: unknown): AppError {
  const message = reason.startsWith(`failed to load '${name}'`) ? reason : `failed to load '${name}': ${reason}`;
  return err instanceof AppError && err.code === 'INVALID_ARGUMENT'
    ? new AppError('INVALID_ARGUMENT', err.message)
    : new AppError('INTERNAL', message, { cause: err });
}
