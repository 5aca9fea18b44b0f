import { configDataType } from '@nvcf/models';
import { AppError, encodeBinaryTensorData } from '@nvcf/protocol';
import type { CoreInferResponse } from '../core/core-types.ts';
import { batchClasses } from './classes-v1.ts';
import type { V1InferPlan } from './infer-request-v1.ts';
import type { InferResponseHeaderMsg, ResponseOutputMsg } from './v1-messages.ts';

/** A v1 answer: its header and the raw bytes of each raw output, in header order. */
export interface V1InferResult {
  header: InferResponseHeaderMsg;
  rawOutputs: Uint8Array[];
}

/**
 * Lays a core response out as v1 (TRTIS 1.x API): each requested output in the requested order, raw ones
 * as little-endian bytes (STRING with 4-byte length prefixes) described by `raw { dims batch_byte_size }` with
 * the batch dimension left out of dims, `cls` ones as `batch_classes` with no raw bytes.
 *
 * @throws AppError INTERNAL when the core left out a requested output (a bug).
 */
export function encodeV1InferResponse(plan: V1InferPlan, res: CoreInferResponse): V1InferResult {
  const rawOutputs: Uint8Array[] = [];
  const output = plan.outputs.map((requested): ResponseOutputMsg => {
    const tensor = res.outputs.find((t) => t.name === requested.name);
    if (!tensor) throw new AppError('INTERNAL', `the model returned no output '${requested.name}'`);
    if (requested.classes !== undefined) {
      return { name: tensor.name, batch_classes: batchClasses(tensor, plan.batching) };
    }
    const bytes = encodeBinaryTensorData(tensor.datatype, tensor.shape, tensor.data, `output '${tensor.name}'`);
    rawOutputs.push(bytes);
    const dims = plan.batching ? tensor.shape.slice(1) : tensor.shape;
    return {
      name: tensor.name,
      raw: { dims, batch_byte_size: bytes.byteLength },
      data_type: configDataType(tensor.datatype),
    };
  });
  const header: InferResponseHeaderMsg = {
    model_name: res.modelName,
    model_version: Number(res.modelVersion),
    batch_size: plan.batchSize,
    output,
  };
  const id = plan.request.id;
  if (id !== undefined) header.id = Number(id);
  return { header, rawOutputs };
}
