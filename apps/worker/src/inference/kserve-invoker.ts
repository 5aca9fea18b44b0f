import type { LoadedModel } from '@nvcf/models';
import { AppError, encodeInferResponse, type InferRequest, parseInferRequest } from '@nvcf/protocol';
import type { InvocationInput, InvocationResult } from '@nvcf/queue';

/**
 * Decodes a KServe V2 JSON inference request (open-inference-protocol.md §3) into tensors.
 * Throws INVALID_ARGUMENT for anything malformed; the caller answers it with a 400.
 */
export function decodeKserveJson(input: InvocationInput, opts: { maxElements: number }): InferRequest {
  if (input.kind !== 'json') {
    throw new AppError('INVALID_ARGUMENT', `ONNX functions take a KServe V2 JSON body, got '${input.contentType}'`);
  }
  return parseInferRequest(input.value, { maxElements: opts.maxElements });
}

/** Runs a decoded request on the model and encodes the KServe V2 JSON response. */
export async function runKserveJson(model: LoadedModel, request: InferRequest): Promise<InvocationResult> {
  const outputNames = request.outputs?.map((o) => o.name);
  const outputs = await model.run(request.inputs, outputNames);
  const body = encodeInferResponse({
    model_name: model.name,
    model_version: model.version,
    ...(request.id !== undefined ? { id: request.id } : {}),
    outputs,
  });
  return { status: 200, contentType: 'application/json', body: Buffer.from(body) };
}
