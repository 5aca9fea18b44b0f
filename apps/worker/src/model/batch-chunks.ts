import { answerInferCall, type InferCall, type InferenceCore, type InferReply } from '@nvcf/inference-server';
import type { Tensor, TensorData } from '@nvcf/protocol';

const rowsOf = (t: Tensor) => t.shape[0] ?? 0;
const rowSize = (t: Tensor) => t.shape.slice(1).reduce((a, b) => a * b, 1);

function sliceRows(t: Tensor, from: number, to: number): Tensor {
  const size = rowSize(t);
  const data = (
    Array.isArray(t.data) ? t.data.slice(from * size, to * size) : t.data.subarray(from * size, to * size)
  ) as TensorData;
  return { ...t, shape: [to - from, ...t.shape.slice(1)], data };
}

/**
 * A large batch sent to a streaming client is run `chunkRows` rows at a time, and each chunk's answer is
 * an event as soon as it exists (issue 4: "large batched requests may stream partial results per chunk").
 * Only when the model batches and every input shares the batch size; otherwise the call runs whole.
 */
export async function answerInChunks(
  core: InferenceCore,
  call: InferCall,
  chunkRows: number,
  onChunk: (reply: InferReply, last: boolean) => Promise<void>,
): Promise<boolean> {
  const inputs = call.request.inputs;
  const batch = inputs[0] ? rowsOf(inputs[0]) : 0;
  if (chunkRows <= 0 || batch <= chunkRows || !core.modelBatches(call.request.modelName)) return false;
  if (inputs.some((t) => rowsOf(t) !== batch)) return false;
  for (let from = 0; from < batch; from += chunkRows) {
    const to = Math.min(batch, from + chunkRows);
    const part: InferCall = {
      ...call,
      request: { ...call.request, inputs: inputs.map((t) => sliceRows(t, from, to)) },
    };
    await onChunk(await answerInferCall(core, part), to === batch);
  }
  return true;
}
