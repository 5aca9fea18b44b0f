import { AppError, type Tensor } from '@nvcf/protocol';
import * as ort from 'onnxruntime-node';
import { classifyRunError } from './run-errors.ts';
import { fromOrtTensor, toOrtTensor } from './tensor-convert.ts';
import type { InstanceThreadData } from './thread-messages.ts';

// A rejected request is reported to its caller; ORT would also print the kernel error to stderr, outside our logs.
const RUN_OPTIONS: ort.InferenceSession.RunOptions = { logSeverityLevel: 4 };

/** One ORT session of a model, as an instance thread and the event loop's inline runs (inline-runs.ts) open it. */
export function createSession(data: InstanceThreadData): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(data.modelPath, {
    executionProviders: [data.ortProvider],
    logSeverityLevel: 2,
    intraOpNumThreads: data.intraOpNumThreads,
    interOpNumThreads: data.interOpNumThreads,
    graphOptimizationLevel: 'all',
    // Parallelism comes from instances and batching, not from running branches of one graph at once.
    executionMode: 'sequential',
  });
}

/**
 * Runs a request; outputs in `fetches` order, and in `timing.ms` how long the native run held its thread. Throws
 * AppError (run-errors.ts) for what the model refused.
 */
export async function runSession(
  session: ort.InferenceSession,
  modelName: string,
  inputs: Tensor[],
  fetches: string[],
  timing: { ms: number } = { ms: 0 },
): Promise<Tensor[]> {
  const feeds = Object.fromEntries(inputs.map((t) => [t.name, toOrtTensor(modelName, t)]));
  let results: ort.InferenceSession.ReturnType;
  // onnxruntime-node runs the session synchronously in a `setImmediate` callback of its own, queued by `run`;
  // this one, queued just before it, marks its start, and the await resumes right after it. Timing from the call
  // instead would count whatever else the event loop did before that callback.
  let started = Number.NaN;
  setImmediate(() => {
    started = performance.now();
  });
  try {
    results = await session.run(feeds, fetches, RUN_OPTIONS);
  } catch (err) {
    throw classifyRunError(err);
  } finally {
    timing.ms = Number.isNaN(started) ? Number.POSITIVE_INFINITY : performance.now() - started;
  }
  return fetches.map((name) => {
    const value = results[name];
    if (!value) throw new AppError('INTERNAL', `ONNX Runtime returned no output '${name}'`);
    return fromOrtTensor(name, value);
  });
}
