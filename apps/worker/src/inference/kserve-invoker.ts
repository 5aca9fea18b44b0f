import type { LoadedModel } from '@nvcf/models';
import { AppError, encodeInferResponse, parseInferRequest } from '@nvcf/protocol';
import type { InvocationInput, InvocationResult } from '@nvcf/queue';

/**
 * Runs one KServe V2 JSON inference request (open-inference-protocol.md §3) on a model and returns
 * the KServe V2 response. Bad requests throw INVALID_ARGUMENT; the caller turns them into a 400.
 */
export async function runKserveJson(
  model: LoadedModel,
  input: InvocationInput,
  opts: { maxElements: number },
): Promise<InvocationResult> {
  if (input.kind !== 'json') {
    throw new AppError('INVALID_ARGUMENT', `ONNX functions take a KServe V2 JSON body, got '${input.contentType}'`);
  }
  const request = parseInferRequest(input.value, { maxElements: opts.maxElements });
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
