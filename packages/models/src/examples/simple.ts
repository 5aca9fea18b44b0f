import { buildModel, OnnxElemType, type ValueSpec } from '../onnx/builder.ts';

/**
 * Triton's `simple` example (docs/examples/model_repository/simple): OUTPUT0 = INPUT0 + INPUT1 and
 * OUTPUT1 = INPUT0 − INPUT1 over INT32 [batch,16]. Triton's file routes through Identity and Cast nodes; plain
 * Add/Sub on INT32 has the same inputs, outputs and results, which is what clients check.
 */
export function buildSimpleModel(): Uint8Array {
  const int32x16 = (name: string): ValueSpec => ({ name, elemType: OnnxElemType.INT32, shape: ['batch', 16] });
  return buildModel({
    graphName: 'simple',
    docString: 'Triton simple example: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1',
    inputs: [int32x16('INPUT0'), int32x16('INPUT1')],
    outputs: [int32x16('OUTPUT0'), int32x16('OUTPUT1')],
    nodes: [
      { opType: 'Add', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT0'], name: 'add' },
      { opType: 'Sub', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT1'], name: 'sub' },
    ],
  });
}

/**
 * Triton's config for `simple`, byte for byte in spirit: max_batch_size 8 means dims omit the batch dimension, and
 * no instance_group or dynamic_batching so the server's defaults apply (Triton `simple` example).
 */
export const SIMPLE_CONFIG_PBTXT = `name: "simple"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  },
  {
    name: "INPUT1"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  },
  {
    name: "OUTPUT1"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
]
`;
