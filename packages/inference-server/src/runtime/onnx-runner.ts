import { AppError, type Tensor, type TensorSpec } from '@nvcf/protocol';
import { createInlineRuns, inputElements } from './inline-runs.ts';
import { InstanceThread } from './instance-thread.ts';
import type { ModelSignature, UnsupportedTensor } from './model-signature.ts';
import type { InstanceThreadData } from './thread-messages.ts';
import { validateRequest } from './validate-request.ts';

/** A model version ready to serve. */
export interface LoadedModel {
  name: string;
  version: string;
  /** The execution provider that accepted the model ('cpu', 'cuda', ...). */
  provider: string;
  /** Shapes use -1 for dynamic dimensions. */
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  /** Inputs/outputs whose ORT type has no API datatype; the model loads, using them fails. */
  unsupported: UnsupportedTensor[];
  /** Model instances (threads, each with its own session): how many runs can execute at once. */
  readonly instances: number;
  /**
   * Runs one request on the least busy instance. Outputs come back in `outputNames` order, or the model's
   * order when none are named. Throws AppError INVALID_ARGUMENT for a request that does not fit the model.
   */
  run(inputs: Tensor[], outputNames?: string[], options?: RunOptions): Promise<Tensor[]>;
  /**
   * A decoupled model (Triton's decoupled transaction policy): answers one request with any number of responses,
   * each handed to `emit` as it is made; resolves once the request is complete (Triton's final flag).
   */
  runDecoupled?(inputs: Tensor[], emit: (outputs: Tensor[]) => void, signal?: AbortSignal): Promise<void>;
}

export interface RunOptions {
  /**
   * The caller gives its input buffers away: each one a tensor is the sole view of moves to the instance's
   * thread without a copy and is empty afterwards (tensor-transfer.ts). Without it inputs are copied.
   */
  moveInputs?: boolean;
}

/** What the session cache holds: the model and the ways to size and let go of its instances. */
export interface ModelHandle {
  model: LoadedModel;
  /** Starts or retires instances until `count` serve (at least one). */
  scale(count: number): Promise<void>;
  /** Refuses new runs, waits for those in flight, then frees every instance's session. */
  release(): Promise<void>;
}

export interface InstanceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Starts a model version's first instance (its load errors are the model's) and wraps the instances as a
 * LoadedModel. An instance whose thread dies is replaced; its runs fail, the others go on.
 *
 * @example
 * const { model, scale } = await startOnnxModel({ modelName: 'simple', modelPath, ortProvider: 'cpu', ... },
 *   { name: 'simple', version: '1', provider: 'cpu' }, logger);
 * await scale(2);
 * const [sum] = await model.run([input0, input1], ['OUTPUT0']);
 */
export async function startOnnxModel(
  data: InstanceThreadData,
  meta: { name: string; version: string; provider: string },
  logger: InstanceLogger,
  /** Runs measured under this many µs go to the event loop (inline-runs.ts); 0: every run on a thread. */
  inlineMaxMicros = 0,
): Promise<ModelHandle> {
  const instances: InstanceThread[] = [];
  let wanted = 1;
  let releasing: Promise<void> | undefined;
  /** Instances being started (scale up or replacement): runs wait for one when none is alive. */
  const starting = new Set<Promise<InstanceThread | undefined>>();

  const startOne = (): Promise<InstanceThread | undefined> => {
    const started = InstanceThread.start(data, replace).then(
      (instance) => {
        if (releasing || instances.length >= wanted) {
          void instance.release();
          return undefined;
        }
        instances.push(instance);
        return instance;
      },
      (err: unknown) => {
        logger.warn({ model: meta.name, version: meta.version, err }, 'model instance failed to start');
        return undefined;
      },
    );
    starting.add(started);
    void started.finally(() => starting.delete(started));
    return started;
  };

  function replace(err: Error): void {
    const at = instances.findIndex((i) => !i.alive);
    if (at >= 0) instances.splice(at, 1);
    logger.warn({ model: meta.name, version: meta.version, reason: err.message }, 'model instance lost; replacing it');
    if (!releasing) void startOne();
  }

  const first = await InstanceThread.start(data, replace);
  const inline = createInlineRuns(data, inlineMaxMicros, logger, meta);
  instances.push(first);
  const signature: ModelSignature = first.signature;

  async function pick(): Promise<InstanceThread> {
    for (;;) {
      const alive = instances.filter((i) => i.alive);
      if (alive.length > 0) return alive.reduce((a, b) => (b.load < a.load ? b : a));
      if (starting.size === 0) startOne();
      const next = await Promise.race(starting);
      if (next === undefined && starting.size === 0 && !instances.some((i) => i.alive)) {
        throw new AppError('UNAVAILABLE', `model '${meta.name}' version ${meta.version} has no running instance`);
      }
    }
  }

  const model: LoadedModel = {
    ...meta,
    inputs: signature.inputs,
    outputs: signature.outputs,
    unsupported: signature.unsupported,
    get instances() {
      return instances.length;
    },
    async run(inputs, outputNames, options) {
      if (releasing) {
        throw new AppError('UNAVAILABLE', `model '${meta.name}' version ${meta.version} is unloaded`);
      }
      const fetches = validateRequest(meta.name, signature, inputs, outputNames);
      const elements = inputElements(inputs);
      if (inline.covers(elements)) return inline.run(inputs, fetches);
      const instance = await pick();
      const { outputs, ms } = await instance.run(inputs, fetches, options?.moveInputs === true);
      void inline.observe(elements, ms);
      return outputs;
    },
  };

  return {
    model,
    async scale(count) {
      wanted = Math.max(1, count);
      const surplus = instances.splice(wanted);
      const adding = Array.from({ length: Math.max(0, wanted - instances.length - starting.size) }, startOne);
      await Promise.all([...surplus.map((i) => i.release()), ...adding]);
      if (instances.length === 0) {
        throw new AppError('UNAVAILABLE', `model '${meta.name}' version ${meta.version} has no running instance`);
      }
    },
    release() {
      releasing ??= (async () => {
        // Each instance finishes the runs already sent to it before its session is freed.
        await Promise.all([...starting]);
        await Promise.all([inline.release(), ...instances.splice(0).map((i) => i.release())]);
      })();
      return releasing;
    },
  };
}
