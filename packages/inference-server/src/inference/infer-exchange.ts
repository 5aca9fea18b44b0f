import { encodeBinaryTensorData, encodeHttpInferResponse, type Tensor } from '@nvcf/protocol';
import type { InferenceCore } from '../core/core-types.ts';
import type { InferCall } from './infer-call.ts';

/** An encoded KServe V2 infer response: JSON, or JSON + binary with its header length. */
export interface InferReply {
  body: Buffer;
  contentType: string;
  headers: Record<string, string>;
}

/**
 * Runs a decoded call on the core and lays the response out as the call asked (binary_data_output,
 * per-output binary_data, raw single-input). The same bytes leave the HTTP port and the worker's queue.
 */
export async function answerInferCall(core: InferenceCore, call: InferCall, signal?: AbortSignal): Promise<InferReply> {
  const res = await core.infer(signal ? { ...call.request, signal } : call.request);
  writeSharedMemoryOutputs(call, res.outputs);
  const out = encodeHttpInferResponse(
    {
      model_name: res.modelName,
      model_version: res.modelVersion,
      ...(res.id !== undefined ? { id: res.id } : {}),
      ...(res.parameters !== undefined ? { parameters: res.parameters } : {}),
      outputs: res.outputs,
    },
    {
      binaryDataOutput: call.binaryDataOutput,
      outputBinary: call.outputBinary,
      rawSingleInput: call.rawSingleInput,
      ...(call.outputShm ? { inSharedMemory: new Set(call.outputShm.keys()) } : {}),
    },
  );
  const headers: Record<string, string> = {};
  if (out.inferenceHeaderContentLength !== undefined) {
    headers['inference-header-content-length'] = String(out.inferenceHeaderContentLength);
  }
  return { body: out.body, contentType: out.contentType, headers };
}

/**
 * Writes the outputs the call asked into shared memory regions there (Triton shared memory extension), BYTES in
 * their serialized (length-prefixed) form.
 */
export function writeSharedMemoryOutputs(call: InferCall, outputs: readonly Tensor[]): void {
  if (!call.outputShm || !call.sharedMemory) return;
  for (const output of outputs) {
    const ref = call.outputShm.get(output.name);
    if (!ref) continue;
    const bytes = encodeBinaryTensorData(output.datatype, output.shape, output.data, `output '${output.name}'`);
    call.sharedMemory.write(ref, bytes, output.name);
  }
}
