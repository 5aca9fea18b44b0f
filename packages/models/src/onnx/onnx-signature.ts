import { AppError, type Datatype, type TensorSpec } from '@nvcf/protocol';
import pkg from 'onnx-proto';

const { onnx } = pkg;

/** ONNX TensorProto.DataType → API datatype (Triton model configuration: datatypes). */
const ELEM_TYPES: Readonly<Record<number, Datatype>> = {
  1: 'FP32',
  2: 'UINT8',
  3: 'INT8',
  4: 'UINT16',
  5: 'INT16',
  6: 'INT32',
  7: 'INT64',
  8: 'BYTES',
  9: 'BOOL',
  10: 'FP16',
  11: 'FP64',
  12: 'UINT32',
  13: 'UINT64',
  16: 'BF16',
};

/**
 * Reads a model's inputs and outputs from its ONNX bytes, without ONNX Runtime: the gateway uses it to
 * refuse a file that is not a usable model when a function is registered, long before a worker loads it.
 * Symbolic or unknown dimensions are -1; initializers listed as graph inputs (old IR versions) are not
 * inputs.
 *
 * @throws AppError INVALID_ARGUMENT when the bytes are not an ONNX model with a typed graph.
 */
export function readOnnxSignature(bytes: Uint8Array): { inputs: TensorSpec[]; outputs: TensorSpec[]; opset: number } {
  let model: InstanceType<typeof onnx.ModelProto>;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `not an ONNX model: ${(err as Error).message}`);
  }
  const graph = model.graph;
  if (!graph || (graph.node?.length ?? 0) === 0) throw new AppError('INVALID_ARGUMENT', 'not an ONNX model: no graph');
  const initializers = new Set((graph.initializer ?? []).map((t) => t.name));
  const spec = (v: pkg.onnx.IValueInfoProto, side: string): TensorSpec => {
    const tensor = v.type?.tensorType;
    const datatype = tensor?.elemType ? ELEM_TYPES[tensor.elemType] : undefined;
    if (!v.name || !datatype) {
      throw new AppError('INVALID_ARGUMENT', `ONNX ${side} '${v.name ?? '?'}' is not a tensor of a supported type`);
    }
    const dims = tensor?.shape?.dim ?? [];
    const shape = dims.map((d) =>
      d.dimValue !== undefined && d.dimValue !== null && Number(d.dimValue) > 0 ? Number(d.dimValue) : -1,
    );
    return { name: v.name, datatype, shape };
  };
  const inputs = (graph.input ?? []).filter((v) => !initializers.has(v.name ?? '')).map((v) => spec(v, 'input'));
  const outputs = (graph.output ?? []).map((v) => spec(v, 'output'));
  if (outputs.length === 0) throw new AppError('INVALID_ARGUMENT', 'not an ONNX model: the graph has no outputs');
  const opset = Number(model.opsetImport?.find((o) => !o.domain)?.version ?? 0);
  return { inputs, outputs, opset };
}
