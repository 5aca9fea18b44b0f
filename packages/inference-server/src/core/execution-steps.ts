import { AppError, classify, type Tensor } from '@nvcf/protocol';
import type { ModelDefinition } from './config-source.ts';
import type { CoreInferRequest } from './core-types.ts';
import { type BatchedAnswer, QueueRejection } from './dynamic-batcher.ts';
import type { FailureReason } from './model-statistics.ts';
import type { ServedVersion } from './served-model.ts';

export const now = () => process.hrtime.bigint();
export const ns = (from: bigint, to: bigint) => Number(to - from);

/** Triton's `timeout` request parameter, in microseconds; anything but a non-negative integer is ignored. */
export function timeoutUs(parameters: Record<string, unknown> | undefined): number | undefined {
  const t = parameters?.timeout;
  if (typeof t === 'bigint') return t >= 0n ? Number(t) : undefined;
  return typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 ? t : undefined;
}

/** A request run as its own execution on an instance slot (no dynamic batching). */
export async function runAlone(
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
export function batchSize(def: ModelDefinition, inputs: Tensor[], model: string): number {
  const max = def.config.max_batch_size;
  if (max === 0) return 1;
  const first = inputs[0]?.shape[0] ?? 1;
  if (first > max) {
    throw new AppError('INVALID_ARGUMENT', `inference request batch-size must be <= ${max} for '${model}'`);
  }
  return first;
}

/** Applies the classification extension to an output when the request asked for it. */
export function postProcess(def: ModelDefinition, tensor: Tensor, classCount: number | undefined): Tensor {
  if (classCount === undefined) return tensor;
  return classify(tensor, classCount, {
    batching: def.config.max_batch_size > 0,
    labels: def.labels.get(tensor.name),
  });
}

/** How a failed request counts in the statistics. */
export function failureReason(err: unknown): FailureReason {
  // Turned away by the scheduler is REJECTED; refused by the model is OTHER; broken inside the run, BACKEND.
  const code = err instanceof AppError ? err.code : 'INTERNAL';
  return err instanceof QueueRejection
    ? 'REJECTED'
    : code === 'INVALID_ARGUMENT'
      ? 'OTHER'
      : code === 'CANCELLED'
        ? 'CANCELED'
        : 'BACKEND';
}
