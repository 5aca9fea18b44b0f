import { AppError, encodeInferResponse, parseInferRequest } from '@nvcf/protocol';
import type { InvocationInput, InvocationResult } from '@nvcf/queue';
import type { CoreInferRequest, InferenceCore } from '../inference-server/core-types.ts';

export interface ModelRef {
  name: string;
  version: string;
}

/**
 * Decodes a KServe V2 JSON inference request (open-inference-protocol.md §3) for a model.
 * Throws INVALID_ARGUMENT for anything malformed; the caller answers it with a 400.
 */
export function decodeKserveJson(
  input: InvocationInput,
  model: ModelRef,
  opts: { maxElements: number },
): CoreInferRequest {
  if (input.kind !== 'json') {
    throw new AppError('INVALID_ARGUMENT', `ONNX functions take a KServe V2 JSON body, got '${input.contentType}'`);
  }
  const req = parseInferRequest(input.value, { maxElements: opts.maxElements });
  return {
    modelName: model.name,
    modelVersion: model.version,
    ...(req.id !== undefined ? { id: req.id } : {}),
    inputs: req.inputs,
    ...(req.outputs ? { outputs: req.outputs.map((o) => ({ name: o.name })) } : {}),
  };
}

/** Runs a decoded request through the inference core and encodes the KServe V2 JSON response. */
export async function runKserveJson(core: InferenceCore, request: CoreInferRequest): Promise<InvocationResult> {
  const res = await core.infer(request);
  const body = encodeInferResponse({
    model_name: res.modelName,
    model_version: res.modelVersion,
    ...(res.id !== undefined ? { id: res.id } : {}),
    outputs: res.outputs,
  });
  return { status: 200, contentType: 'application/json', body: Buffer.from(body) };
}
