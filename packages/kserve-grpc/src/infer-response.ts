import { encodeBinaryTensorData, type Tensor } from '@nvcf/protocol';
import { encodeParameters } from './infer-parameters.ts';
import type { ModelInferResponseMsg } from './kserve-messages.ts';

/** An infer response to encode, independent of the wire (the worker's core response has this shape). */
export interface GrpcInferResponse {
  modelName: string;
  modelVersion: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: Tensor[];
}

/** Parameters that describe the HTTP binary extension's framing and mean nothing on gRPC. */
const HTTP_ONLY = new Set(['binary_data_size', 'binary_data']);

/**
 * Encodes a response as a ModelInferResponse whose outputs are all in `raw_output_contents`
 * (BYTES with 4-byte little-endian length prefixes), never typed `contents`: tritonclient's `as_numpy`
 * reads only the raw form, and Triton always answers with it (Triton Python client).
 */
export function encodeModelInferResponse(
  res: GrpcInferResponse,
  opts: { inSharedMemory?: ReadonlySet<string> } = {},
): ModelInferResponseMsg {
  const raw: Uint8Array[] = [];
  const outputs = res.outputs.map((t) => {
    if (opts.inSharedMemory?.has(t.name)) {
      // Written to its region (Triton shared memory extension): listed, with an empty entry so indices stay aligned.
      raw.push(Buffer.alloc(0));
      return { name: t.name, datatype: t.datatype, shape: t.shape, parameters: {} };
    }
    const bytes = encodeBinaryTensorData(t.datatype, t.shape, t.data, `output '${t.name}'`);
    // A Buffer view (no copy): protobufjs copies Buffers with one memcpy, plain Uint8Arrays byte by byte.
    raw.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const parameters = t.parameters
      ? encodeParameters(Object.fromEntries(Object.entries(t.parameters).filter(([k]) => !HTTP_ONLY.has(k))))
      : {};
    return { name: t.name, datatype: t.datatype, shape: t.shape, parameters };
  });
  return {
    model_name: res.modelName,
    model_version: res.modelVersion,
    id: res.id ?? '',
    parameters: encodeParameters(res.parameters),
    outputs,
    raw_output_contents: raw,
  };
}
