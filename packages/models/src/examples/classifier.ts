import { buildModel, float32RawData, type InitializerSpec, type NodeSpec, OnnxElemType } from '../onnx/builder.ts';
import { mulberry32 } from './prng.ts';

/** Layer widths: an MNIST-sized dense classifier, big enough to make batching and threads measurable. */
export const CLASSIFIER_LAYERS = [784, 512, 512, 10] as const;
const CLASSIFIER_SEED = 0x5eed_c1a5;

/**
 * Uniform weights with variance `gain / fanIn`: gain 2 (He) keeps ReLU activations from shrinking layer to layer;
 * gain 1 on the last layer keeps logits moderate so Softmax does not saturate into one-hot outputs.
 */
function denseLayer(next: () => number, name: string, fanIn: number, fanOut: number, gain: number): InitializerSpec[] {
  const limit = Math.sqrt((3 * gain) / fanIn);
  const weights = new Float32Array(fanIn * fanOut);
  for (let i = 0; i < weights.length; i++) weights[i] = (next() * 2 - 1) * limit;
  const bias = new Float32Array(fanOut);
  for (let i = 0; i < bias.length; i++) bias[i] = (next() * 2 - 1) * 0.01;
  return [
    { name: `${name}.weight`, elemType: OnnxElemType.FLOAT, dims: [fanIn, fanOut], rawData: float32RawData(weights) },
    { name: `${name}.bias`, elemType: OnnxElemType.FLOAT, dims: [fanOut], rawData: float32RawData(bias) },
  ];
}

/**
 * Dense FP32 classifier 784→512→512→10 (Gemm + ReLU, Softmax at the end) with fixed seeded weights.
 * Input `INPUT` FP32 [batch,784], output `PROBABILITIES` FP32 [batch,10].
 */
export function buildClassifierModel(): Uint8Array {
  const next = mulberry32(CLASSIFIER_SEED);
  const initializers: InitializerSpec[] = [];
  const nodes: NodeSpec[] = [];
  let current = 'INPUT';
  for (let layer = 0; layer < CLASSIFIER_LAYERS.length - 1; layer++) {
    const last = layer === CLASSIFIER_LAYERS.length - 2;
    const name = `fc${layer + 1}`;
    const fanIn = CLASSIFIER_LAYERS[layer] as number;
    const fanOut = CLASSIFIER_LAYERS[layer + 1] as number;
    initializers.push(...denseLayer(next, name, fanIn, fanOut, last ? 1 : 2));
    // Gemm defaults (alpha = beta = 1, no transposes) compute X·W + b with b broadcast over the batch.
    nodes.push({ opType: 'Gemm', inputs: [current, `${name}.weight`, `${name}.bias`], outputs: [`${name}.out`], name });
    current = `${name}.out`;
    if (!last) {
      nodes.push({ opType: 'Relu', inputs: [current], outputs: [`${name}.relu`], name: `${name}_relu` });
      current = `${name}.relu`;
    }
  }
  // Softmax defaults to axis -1 since opset 13: one distribution per row.
  nodes.push({ opType: 'Softmax', inputs: [current], outputs: ['PROBABILITIES'], name: 'softmax' });
  return buildModel({
    graphName: 'classifier',
    docString: 'Dense FP32 classifier 784-512-512-10 with seeded weights (no training; for load and latency tests)',
    inputs: [{ name: 'INPUT', elemType: OnnxElemType.FLOAT, shape: ['batch', 784] }],
    outputs: [{ name: 'PROBABILITIES', elemType: OnnxElemType.FLOAT, shape: ['batch', 10] }],
    nodes,
    initializers,
  });
}

/** Class names for the classification extension: line i names class index i. */
export const CLASSIFIER_LABELS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/**
 * The classifier's config: batches up to 64 rows (without a config, auto-complete would allow 4), and
 * names the label file so classification answers read `0.123456:3:three`.
 */
export const CLASSIFIER_CONFIG_PBTXT = `name: "classifier"
platform: "onnxruntime_onnx"
max_batch_size: 64
input [
  {
    name: "INPUT"
    data_type: TYPE_FP32
    dims: [ 784 ]
  }
]
output [
  {
    name: "PROBABILITIES"
    data_type: TYPE_FP32
    dims: [ 10 ]
    label_filename: "labels.txt"
  }
]
`;
