import { type BuiltInBackend, compareModelVersions, type ModelVersionEntry } from '@nvcf/models';
import { AppError, type TensorSpec } from '@nvcf/protocol';
import { startDynaSequenceModel } from './dyna-sequence-model.ts';
import { type ExecutionProvider, ortProviderName, parseExecutionProviders } from './execution-providers.ts';
import { startGreedyDecoderModel } from './greedy-decoder-model.ts';
import { startIdentityModel } from './identity-model.ts';
import { type LoadedModel, type ModelHandle, startOnnxModel } from './onnx-runner.ts';
import { type ProviderProbe, probeProviders } from './provider-probe.ts';
import { startRepeatModel } from './repeat-model.ts';

/**
 * A version to load: for a built-in backend, with the tensors its config gives (the model file, if the backend has
 * one, is not what clients see).
 */
export type LoadEntry = ModelVersionEntry & {
  builtIn?: { backend: BuiltInBackend; inputs: TensorSpec[]; outputs: TensorSpec[] };
};

/** The two pino methods we use, so any pino logger (or a test double) fits. */
export interface SessionLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SessionCacheOptions {
  /** Preference order, e.g. ['cuda', 'cpu']: the first that accepts a model serves it. */
  executionProviders: string[];
  /** Threads inside one operator; 0 lets ORT choose. */
  intraOpNumThreads: number;
  /** Threads across operators (parallel execution mode only); 0 lets ORT choose. */
  interOpNumThreads: number;
  /** Runs measured under this many µs execute on the event loop (inline-runs.ts); absent or 0: every run on a thread. */
  inlineMaxMicros?: number;
  logger: SessionLogger;
}

const key = (name: string, version: string) => `${name}\u0000${version}`;
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

function checkThreads(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${field} must be an integer ≥ 0, got ${value}`);
}

/**
 * The models this process serves, one entry per (model, version), each on the first execution provider that
 * works. A version runs on one or more instances: worker threads holding an ORT session each (onnx-runner.ts),
 * so a long inference never occupies the event loop (runs measured tiny do: inline-runs.ts).
 *
 * @example
 * const cache = new SessionCache({ executionProviders: ['cuda', 'cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, logger });
 * const model = await cache.load(entry); // entry from scanModelRepository
 * await cache.close();
 */
export class SessionCache {
  readonly #providers: ExecutionProvider[];
  readonly #options: SessionCacheOptions;
  readonly #loading = new Map<string, Promise<ModelHandle>>();
  readonly #loaded = new Map<string, ModelHandle>();
  #closed = false;
  #probed: Promise<ProviderProbe> | undefined;

  constructor(options: SessionCacheOptions) {
    this.#providers = parseExecutionProviders(options.executionProviders);
    checkThreads('intraOpNumThreads', options.intraOpNumThreads);
    checkThreads('interOpNumThreads', options.interOpNumThreads);
    this.#options = options;
  }

  /** Loads a model version, or returns the one loaded or loading already (concurrent callers share one load). */
  async load(entry: LoadEntry): Promise<LoadedModel> {
    if (this.#closed) throw new AppError('UNAVAILABLE', 'session cache is closed');
    const k = key(entry.name, entry.version);
    let pending = this.#loading.get(k);
    if (!pending) {
      pending = this.#create(entry);
      this.#loading.set(k, pending);
      pending.then(
        (handle) => {
          // Only if nobody unloaded it meanwhile (unload takes the promise out of #loading).
          if (this.#loading.get(k) === pending) this.#loaded.set(k, handle);
        },
        () => {
          // A failed load is forgotten so a later call (after the file is fixed) can try again.
          if (this.#loading.get(k) === pending) this.#loading.delete(k);
        },
      );
    }
    return (await pending).model;
  }

  get(name: string, version: string): LoadedModel | undefined {
    return this.#loaded.get(key(name, version))?.model;
  }

  /**
   * Runs a loaded version on `count` instances (threads with a session each), as its instance_group says.
   * Resolves false when the version is not loaded.
   */
  async scale(name: string, version: string, count: number): Promise<boolean> {
    const pending = this.#loading.get(key(name, version));
    if (!pending) return false;
    await (await pending).scale(count);
    return true;
  }

  /** Loaded models (not those still loading), by name then numeric version. */
  list(): LoadedModel[] {
    return [...this.#loaded.values()].map((h) => h.model).sort(compareModelVersions);
  }

  /** Frees a model version after its in-flight runs finish. Resolves false when it was not loaded or loading. */
  async unload(name: string, version: string): Promise<boolean> {
    const k = key(name, version);
    const pending = this.#loading.get(k);
    if (!pending) return false;
    this.#loading.delete(k);
    this.#loaded.delete(k);
    const handle = await pending.catch(() => undefined);
    await handle?.release();
    return handle !== undefined;
  }

  /** Frees every session; later loads are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#loading.keys()].map((k) => {
      const [name, version] = k.split('\u0000') as [string, string];
      return this.unload(name, version);
    });
    await Promise.all(all);
  }

  /** The configured providers this machine can start; said once, in one log line, per cache. */
  async #usableProviders(): Promise<ProviderProbe> {
    this.#probed ??= probeProviders(this.#providers).then((probe) => {
      const { usable, unavailable } = probe;
      this.#options.logger.info(
        { providers: usable, unavailable },
        `execution providers: ${usable.join(', ') || 'none'}`,
      );
      return probe;
    });
    return this.#probed;
  }

  async #create(entry: LoadEntry): Promise<ModelHandle> {
    const { logger } = this.#options;
    if (entry.builtIn) {
      const { backend, inputs, outputs } = entry.builtIn;
      const spec = { name: entry.name, version: entry.version, inputs, outputs };
      let handle: ModelHandle;
      if (backend === 'greedy_decoder') {
        // The decoder's next-token model is an ONNX model like any other: the same providers, the same instances.
        const nextToken = await this.#startOnnx(entry);
        try {
          handle = startGreedyDecoderModel(spec, nextToken);
        } catch (err) {
          await nextToken.release();
          throw err;
        }
      } else {
        const start = { identity: startIdentityModel, repeat: startRepeatModel, dyna_sequence: startDynaSequenceModel };
        handle = start[backend](spec);
      }
      logger.info({ model: entry.name, version: entry.version, backend }, 'model loaded');
      return handle;
    }
    const handle = await this.#startOnnx(entry);
    logger.info({ model: entry.name, version: entry.version, provider: handle.model.provider }, 'model loaded');
    return handle;
  }

  /** The version's model.onnx on the first usable provider that accepts it. */
  async #startOnnx(entry: LoadEntry): Promise<ModelHandle> {
    const { logger, intraOpNumThreads, interOpNumThreads } = this.#options;
    const failures: string[] = [];
    const { usable: providers, unavailable } = await this.#usableProviders();
    if (providers.length === 0) {
      const why = Object.entries(unavailable).map(([p, r]) => `${p}: ${r}`);
      throw new AppError(
        'INVALID_ARGUMENT',
        `failed to load '${entry.name}' version ${entry.version}: no configured execution provider can start here (${why.join('; ')})`,
      );
    }
    for (const [i, provider] of providers.entries()) {
      try {
        return await startOnnxModel(
          {
            modelName: entry.name,
            modelPath: entry.modelPath,
            ortProvider: ortProviderName(provider),
            intraOpNumThreads,
            interOpNumThreads,
          },
          { name: entry.name, version: entry.version, provider },
          logger,
          this.#options.inlineMaxMicros ?? 0,
        );
      } catch (err) {
        failures.push(`${provider}: ${reason(err)}`);
        const next = providers[i + 1];
        logger.warn(
          { model: entry.name, version: entry.version, provider, reason: reason(err) },
          next ? `execution provider ${provider} failed; trying ${next}` : `execution provider ${provider} failed`,
        );
      }
    }
    throw new AppError(
      'INVALID_ARGUMENT',
      `failed to load '${entry.name}' version ${entry.version}: ${failures.join('; ')}`,
    );
  }
}
