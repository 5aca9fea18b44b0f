import { AppError, type Tensor, type TensorSpec } from '@nvcf/protocol';
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { readModelSignature, type UnsupportedTensor } from './model-signature.ts';
import { classifyRunError } from './run-errors.ts';
import { fromOrtTensor, toOrtTensor } from './tensor-convert.ts';
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
  /**
   * Runs one request. Outputs come back in `outputNames` order, or the model's order when none are named.
   * Throws AppError INVALID_ARGUMENT for a request that does not fit the model.
   */
  run(inputs: Tensor[], outputNames?: string[]): Promise<Tensor[]>;
}

/** What the session cache holds: the model and the way to let go of its session. */
export interface ModelHandle {
  model: LoadedModel;
  /** Refuses new runs, waits for those in flight, then frees the native session. */
  release(): Promise<void>;
}

// A rejected request is reported to its caller; ORT would also print the kernel error to stderr, outside our logs.
const RUN_OPTIONS: InferenceSession.RunOptions = { logSeverityLevel: 4 };

/**
 * Wraps an ORT session as a LoadedModel.
 *
 * @example
 * const { model } = createOnnxRunner(session, { name: 'simple', version: '1', provider: 'cpu' });
 * const [sum] = await model.run([input0, input1], ['OUTPUT0']);
 */
export function createOnnxRunner(
  session: InferenceSession,
  meta: { name: string; version: string; provider: string },
): ModelHandle {
  const signature = readModelSignature(session);
  const inFlight = new Set<Promise<unknown>>();
  let releasing: Promise<void> | undefined;

  async function execute(inputs: Tensor[], outputNames?: string[]): Promise<Tensor[]> {
    const fetches = validateRequest(meta.name, signature, inputs, outputNames);
    const feeds = Object.fromEntries(inputs.map((t) => [t.name, toOrtTensor(meta.name, t)]));
    let results: InferenceSession.ReturnType;
    try {
      results = await session.run(feeds, fetches, RUN_OPTIONS);
    } catch (err) {
      throw classifyRunError(err);
    }
    return fetches.map((name) => fromOrtTensor(name, results[name] as OrtTensor));
  }

  const model: LoadedModel = {
    ...meta,
    inputs: signature.inputs,
    outputs: signature.outputs,
    unsupported: signature.unsupported,
    run(inputs, outputNames) {
      if (releasing) {
        return Promise.reject(new AppError('UNAVAILABLE', `model '${meta.name}' version ${meta.version} is unloaded`));
      }
      const run = execute(inputs, outputNames);
      inFlight.add(run);
      const forget = () => inFlight.delete(run);
      run.then(forget, forget);
      return run;
    },
  };

  return {
    model,
    release() {
      releasing ??= (async () => {
        // Freeing the native session under a queued run makes that run fail with "Session already disposed".
        await Promise.allSettled([...inFlight]);
        await session.release();
      })();
      return releasing;
    },
  };
}
