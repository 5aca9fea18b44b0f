import { join } from 'node:path';
import { buildModel, float32RawData, type InitializerSpec, type NodeSpec, OnnxElemType } from '../onnx/builder.ts';
import { mulberry32 } from './prng.ts';
import { writeFileAtomic, writeModelVersion } from './write-model.ts';

const DENSENET_SEED = 0xde75_e7;
/** Convolutions: [output channels, kernel, stride]; each halves the image, ReLU after each (~3 ms per image on one core). */
const CONVS = [
  [32, 7, 2],
  [64, 3, 2],
  [128, 3, 2],
  [256, 3, 2],
] as const;
const CLASSES = 1000;

function initializer(name: string, dims: number[], values: Float32Array): InitializerSpec {
  return { name, elemType: OnnxElemType.FLOAT, dims, rawData: float32RawData(values) };
}

/** He-uniform weights (gain 2 for ReLU layers, 1 for the logits) from a seeded generator. */
function weights(next: () => number, count: number, fanIn: number, gain: number): Float32Array {
  const limit = Math.sqrt((3 * gain) / fanIn);
  const w = new Float32Array(count);
  for (let i = 0; i < count; i++) w[i] = (next() * 2 - 1) * limit;
  return w;
}

/**
 * `densenet_onnx`: a small convolutional image classifier with the input and output of the DenseNet model in
 * Triton's examples (`data_0` FP32 [3,224,224] → `fc6_1` FP32 [1000], ImageNet-sized label file), so Triton's
 * image-classification clients find what they expect. Four strided convolutions with ReLU, global average
 * pooling and a 256→1000 layer with Softmax, seeded weights: not trained (its answers mean nothing), but a model
 * where compute matters (convolutions over a 224×224 image) for batching and thread figures.
 */
export function buildDensenetModel(): Uint8Array {
  const next = mulberry32(DENSENET_SEED);
  const initializers: InitializerSpec[] = [];
  const nodes: NodeSpec[] = [];
  let current = 'data_0';
  let channels = 3;
  CONVS.forEach(([out, kernel, stride], i) => {
    const name = `conv${i + 1}`;
    const fanIn = channels * kernel * kernel;
    initializers.push(
      initializer(`${name}.weight`, [out, channels, kernel, kernel], weights(next, out * fanIn, fanIn, 2)),
    );
    initializers.push(initializer(`${name}.bias`, [out], new Float32Array(out)));
    const pad = Math.floor(kernel / 2);
    nodes.push({
      opType: 'Conv',
      name,
      inputs: [current, `${name}.weight`, `${name}.bias`],
      outputs: [`${name}.out`],
      attributes: { kernel_shape: [kernel, kernel], strides: [stride, stride], pads: [pad, pad, pad, pad] },
    });
    nodes.push({ opType: 'Relu', name: `${name}_relu`, inputs: [`${name}.out`], outputs: [`${name}.relu`] });
    current = `${name}.relu`;
    channels = out;
  });
  nodes.push({ opType: 'GlobalAveragePool', name: 'pool', inputs: [current], outputs: ['pooled'] });
  nodes.push({
    opType: 'Flatten',
    name: 'flatten',
    inputs: ['pooled'],
    outputs: ['features'],
    attributes: { axis: 1 },
  });
  initializers.push(initializer('fc.weight', [channels, CLASSES], weights(next, channels * CLASSES, channels, 1)));
  initializers.push(initializer('fc.bias', [CLASSES], new Float32Array(CLASSES)));
  nodes.push({ opType: 'Gemm', name: 'fc', inputs: ['features', 'fc.weight', 'fc.bias'], outputs: ['logits'] });
  nodes.push({ opType: 'Softmax', name: 'softmax', inputs: ['logits'], outputs: ['fc6_1'] });
  return buildModel({
    graphName: 'densenet_onnx',
    docString: 'Small conv image classifier with DenseNet I/O (data_0 [3,224,224] -> fc6_1 [1000]); seeded, untrained',
    inputs: [{ name: 'data_0', elemType: OnnxElemType.FLOAT, shape: ['batch', 3, 224, 224] }],
    outputs: [{ name: 'fc6_1', elemType: OnnxElemType.FLOAT, shape: ['batch', CLASSES] }],
    nodes,
    initializers,
  });
}

/** Batches of up to 8 images, and the label file the classification extension reads (`class_<i>`). */
export const DENSENET_CONFIG_PBTXT = `name: "densenet_onnx"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "data_0"
    data_type: TYPE_FP32
    dims: [ 3, 224, 224 ]
  }
]
output [
  {
    name: "fc6_1"
    data_type: TYPE_FP32
    dims: [ 1000 ]
    label_filename: "densenet_labels.txt"
  }
]
`;

/** Writes `<dir>/densenet_onnx/1/model.onnx`, its config and `densenet_labels.txt`. */
export async function writeDensenetModel(dir: string): Promise<void> {
  const modelDir = await writeModelVersion(dir, 'densenet_onnx', buildDensenetModel());
  await writeFileAtomic(join(modelDir, 'config.pbtxt'), DENSENET_CONFIG_PBTXT);
  const labels = Array.from({ length: CLASSES }, (_, i) => `class_${i}`).join('\n');
  await writeFileAtomic(join(modelDir, 'densenet_labels.txt'), `${labels}\n`);
}
