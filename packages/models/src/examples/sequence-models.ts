import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildModel, OnnxElemType, type ValueSpec } from '../onnx/builder.ts';
import { writeFileAtomic, writeModelVersion } from './write-model.ts';

/**
 * Triton's sequence examples (docs/examples/model_repository/simple_sequence, simple_dyna_sequence), with their
 * graphs: stateless by design — Triton's generators say they do not implement a real accumulator and its clients
 * expect exactly these values. The sequence batcher feeds the control inputs (START, END, READY, CORRID).
 */
const int32 = (name: string): ValueSpec => ({ name, elemType: OnnxElemType.INT32, shape: ['batch', 1] });

/** `simple_sequence`: OUTPUT = READY · (INPUT + START). */
export function buildSimpleSequenceModel(): Uint8Array {
  return buildModel({
    graphName: 'simple_sequence',
    docString: 'Triton simple_sequence: OUTPUT = READY * (INPUT + START)',
    inputs: [int32('INPUT'), int32('START'), int32('READY')],
    outputs: [int32('OUTPUT')],
    nodes: [
      { opType: 'Add', inputs: ['INPUT', 'START'], outputs: ['SUM'], name: 'add_start' },
      { opType: 'Mul', inputs: ['READY', 'SUM'], outputs: ['OUTPUT'], name: 'mul_ready' },
    ],
  });
}

/** `simple_dyna_sequence`: OUTPUT = READY · (INPUT + START + END · int32(CORRID)). */
export function buildSimpleDynaSequenceModel(): Uint8Array {
  return buildModel({
    graphName: 'simple_dyna_sequence',
    docString: 'Triton simple_dyna_sequence: OUTPUT = READY * (INPUT + START + END * int32(CORRID))',
    inputs: [
      int32('INPUT'),
      int32('START'),
      int32('END'),
      int32('READY'),
      { name: 'CORRID', elemType: OnnxElemType.UINT64, shape: ['batch', 1] },
    ],
    outputs: [int32('OUTPUT')],
    nodes: [
      {
        opType: 'Cast',
        inputs: ['CORRID'],
        outputs: ['CORRID_INT32'],
        name: 'cast_corrid',
        attributes: { to: OnnxElemType.INT32 },
      },
      { opType: 'Mul', inputs: ['END', 'CORRID_INT32'], outputs: ['END_CORRID'], name: 'mul_end' },
      { opType: 'Add', inputs: ['INPUT', 'START'], outputs: ['SUM0'], name: 'add_start' },
      { opType: 'Add', inputs: ['SUM0', 'END_CORRID'], outputs: ['SUM1'], name: 'add_end' },
      { opType: 'Mul', inputs: ['READY', 'SUM1'], outputs: ['OUTPUT'], name: 'mul_ready' },
    ],
  });
}

const IO = `input [
  {
    name: "INPUT"
    data_type: TYPE_INT32
    dims: [ 1 ]
  }
]
output [
  {
    name: "OUTPUT"
    data_type: TYPE_INT32
    dims: [ 1 ]
  }
]`;

export const SIMPLE_SEQUENCE_CONFIG_PBTXT = `name: "simple_sequence"
platform: "onnxruntime_onnx"
max_batch_size: 8
sequence_batching {
  control_input [
    {
      name: "START"
      control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "READY"
      control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ]
    }
  ]
}
${IO}
instance_group [ { kind: KIND_CPU } ]
`;

export const SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT = `name: "simple_dyna_sequence"
platform: "onnxruntime_onnx"
max_batch_size: 8
sequence_batching {
  max_sequence_idle_microseconds: 10000000
  oldest {
    max_candidate_sequences: 1024
    max_queue_delay_microseconds: 10000
  }
  control_input [
    {
      name: "START"
      control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "END"
      control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "READY"
      control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "CORRID"
      control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ]
    }
  ]
}
${IO}
instance_group [ { count: 2 kind: KIND_CPU } ]
`;

/**
 * `simple_string_dyna_sequence` (built by Triton's QA from `simple_dyna_sequence`): the same config with a string
 * CORRID, on the dyna_sequence backend — a true running sum per sequence, plus the id at END.
 */
export const SIMPLE_STRING_DYNA_SEQUENCE_CONFIG_PBTXT = SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT.replace(
  'name: "simple_dyna_sequence"\nplatform: "onnxruntime_onnx"',
  'name: "simple_string_dyna_sequence"\nbackend: "dyna_sequence"',
).replace('data_type: TYPE_UINT64', 'data_type: TYPE_STRING');

/**
 * Writes `simple_sequence`, `simple_dyna_sequence` and `simple_string_dyna_sequence` (no model file: a built-in
 * backend), each with its config, into `repositoryDir`.
 */
export async function writeSequenceModels(repositoryDir: string): Promise<void> {
  const stringDir = join(repositoryDir, 'simple_string_dyna_sequence');
  await mkdir(join(stringDir, '1'), { recursive: true });
  await writeFileAtomic(join(stringDir, 'config.pbtxt'), SIMPLE_STRING_DYNA_SEQUENCE_CONFIG_PBTXT);
  const models: [string, Uint8Array, string][] = [
    ['simple_sequence', buildSimpleSequenceModel(), SIMPLE_SEQUENCE_CONFIG_PBTXT],
    ['simple_dyna_sequence', buildSimpleDynaSequenceModel(), SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT],
  ];
  for (const [name, model, config] of models) {
    const modelDir = await writeModelVersion(repositoryDir, name, model);
    await writeFileAtomic(join(modelDir, 'config.pbtxt'), config);
  }
}
