import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildModel, OnnxElemType, type ValueSpec } from '../onnx/builder.ts';
import { writeSequenceModels } from './sequence-models.ts';
import { writeFileAtomic, writeModelVersion } from './write-model.ts';

/**
 * More of Triton's example repository (docs/examples/model_repository and the QA models its client examples
 * use), generated with the names, tensors, datatypes, shapes and results Triton's own clients check.
 */

const pair = (elemType: OnnxElemType, prefix: string): ValueSpec[] =>
  [0, 1].map((i) => ({ name: `${prefix}${i}`, elemType, shape: ['batch', 16] }));

/**
 * `simple` computed through int32: each input cast to INT32, Add and Sub, each result cast back. With INT8 that is
 * Triton's `simple_int8` graph; with STRING, `simple_string`'s (decimal strings parsed, and the results written back
 * as plain decimal strings, "16" or "-1").
 */
function buildCastThroughInt32(graphName: string, elemType: OnnxElemType): Uint8Array {
  const cast = (from: string, to: string, type: OnnxElemType) => ({
    opType: 'Cast',
    inputs: [from],
    outputs: [to],
    name: `cast_${to}`,
    attributes: { to: type },
  });
  return buildModel({
    graphName,
    docString: `Triton ${graphName} example: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, computed in int32`,
    inputs: pair(elemType, 'INPUT'),
    outputs: pair(elemType, 'OUTPUT'),
    nodes: [
      cast('INPUT0', 'IN0_INT32', OnnxElemType.INT32),
      cast('INPUT1', 'IN1_INT32', OnnxElemType.INT32),
      { opType: 'Add', inputs: ['IN0_INT32', 'IN1_INT32'], outputs: ['SUM_INT32'], name: 'add' },
      { opType: 'Sub', inputs: ['IN0_INT32', 'IN1_INT32'], outputs: ['DIFF_INT32'], name: 'sub' },
      cast('SUM_INT32', 'OUTPUT0', elemType),
      cast('DIFF_INT32', 'OUTPUT1', elemType),
    ],
  });
}

/** `simple`'s config for another element type (Triton's `simple_int8`, `simple_string`). */
function simpleVariantConfig(name: string, dataType: string): string {
  const tensor = (n: string) => `  {\n    name: "${n}"\n    data_type: ${dataType}\n    dims: [ 16 ]\n  }`;
  return `name: "${name}"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
${tensor('INPUT0')},
${tensor('INPUT1')}
]
output [
${tensor('OUTPUT0')},
${tensor('OUTPUT1')}
]
`;
}

export const buildSimpleInt8Model = () => buildCastThroughInt32('simple_int8', OnnxElemType.INT8);
export const buildSimpleStringModel = () => buildCastThroughInt32('simple_string', OnnxElemType.STRING);
export const SIMPLE_INT8_CONFIG_PBTXT = simpleVariantConfig('simple_int8', 'TYPE_INT8');
export const SIMPLE_STRING_CONFIG_PBTXT = simpleVariantConfig('simple_string', 'TYPE_STRING');

/**
 * `custom_identity_int32` (Triton QA's identity-backend model the client memory and timeout tests call): INPUT0
 * echoed as OUTPUT0, INT32, variable length, batches up to 1024. One ONNX Identity node does what the identity
 * backend does for it.
 */
export function buildCustomIdentityInt32Model(): Uint8Array {
  const spec = (name: string): ValueSpec => ({ name, elemType: OnnxElemType.INT32, shape: ['batch', 'n'] });
  return buildModel({
    graphName: 'custom_identity_int32',
    docString: 'Triton custom_identity_int32: OUTPUT0 = INPUT0',
    inputs: [spec('INPUT0')],
    outputs: [spec('OUTPUT0')],
    nodes: [{ opType: 'Identity', inputs: ['INPUT0'], outputs: ['OUTPUT0'], name: 'identity' }],
  });
}

export const CUSTOM_IDENTITY_INT32_CONFIG_PBTXT = `name: "custom_identity_int32"
platform: "onnxruntime_onnx"
max_batch_size: 1024
version_policy: { latest { num_versions: 1 } }
instance_group [ { kind: KIND_CPU } ]
input [
  {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ -1 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_INT32
    dims: [ -1 ]
  }
]
`;

/**
 * `simple_identity` (Triton's Python-backend example echoing INPUT0 as OUTPUT0): BYTES, any bytes — NULs and
 * non-UTF-8 included, which ONNX Runtime string tensors cannot carry — so it runs on the built-in identity
 * backend, whose config needs no model file.
 */
export const SIMPLE_IDENTITY_CONFIG_PBTXT = `name: "simple_identity"
backend: "identity"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_STRING
    dims: [ -1 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_STRING
    dims: [ -1 ]
  }
]
`;

/**
 * `repeat_int32` (Triton's decoupled example, `src/test/models/repeat_int32`): one response per element of IN, each
 * after its DELAY in ms, on the built-in repeat backend.
 */
export const REPEAT_INT32_CONFIG_PBTXT = `name: "repeat_int32"
backend: "repeat"
max_batch_size: 0
model_transaction_policy {
  decoupled: true
}
input [
  {
    name: "IN"
    data_type: TYPE_INT32
    dims: [ -1 ]
  },
  {
    name: "DELAY"
    data_type: TYPE_UINT32
    dims: [ -1 ]
  },
  {
    name: "WAIT"
    data_type: TYPE_UINT32
    dims: [ 1 ]
  }
]
output [
  {
    name: "OUT"
    data_type: TYPE_INT32
    dims: [ 1 ]
  },
  {
    name: "IDX"
    data_type: TYPE_UINT32
    dims: [ 1 ]
  }
]
`;

/**
 * Writes `simple_int8`, `simple_string`, `custom_identity_int32`, `simple_identity`, `repeat_int32` and the sequence examples
 * (`simple_sequence`, `simple_dyna_sequence`), each with its config, into `repositoryDir`.
 */
export async function writeTritonExampleModels(repositoryDir: string): Promise<void> {
  // Built-in backends: a version directory and a config, no model file.
  for (const [name, config] of [
    ['simple_identity', SIMPLE_IDENTITY_CONFIG_PBTXT],
    ['repeat_int32', REPEAT_INT32_CONFIG_PBTXT],
  ] as const) {
    await mkdir(join(repositoryDir, name, '1'), { recursive: true });
    await writeFileAtomic(join(repositoryDir, name, 'config.pbtxt'), config);
  }
  const models: [string, Uint8Array, string][] = [
    ['simple_int8', buildSimpleInt8Model(), SIMPLE_INT8_CONFIG_PBTXT],
    ['simple_string', buildSimpleStringModel(), SIMPLE_STRING_CONFIG_PBTXT],
    ['custom_identity_int32', buildCustomIdentityInt32Model(), CUSTOM_IDENTITY_INT32_CONFIG_PBTXT],
  ];
  for (const [name, model, config] of models) {
    const modelDir = await writeModelVersion(repositoryDir, name, model);
    await writeFileAtomic(join(modelDir, 'config.pbtxt'), config);
  }
  await writeSequenceModels(repositoryDir);
}
