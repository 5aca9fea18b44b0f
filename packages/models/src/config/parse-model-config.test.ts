import { describe, expect, it } from 'vitest';
import { SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import type { ModelConfig } from './model-config.ts';
import { parseModelConfigText } from './parse-model-config.ts';
import { DENSENET_CONFIG_PBTXT, NESTED_EXTRAS_PBTXT, SEQUENCE_CONFIG_PBTXT } from './test-configs.ts';

const int32x16 = (name: string) => ({
  name,
  data_type: 'TYPE_INT32' as const,
  format: 'FORMAT_NONE' as const,
  dims: [16],
  is_shape_tensor: false,
  allow_ragged_batch: false,
  optional: false,
});
const out32x16 = (name: string) => ({
  name,
  data_type: 'TYPE_INT32' as const,
  dims: [16],
  label_filename: '',
  is_shape_tensor: false,
});

function errorOf(text: string): string {
  try {
    parseModelConfigText(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseModelConfigText: Triton example configs', () => {
  it("reads Triton's simple example config with protobuf defaults everywhere else", () => {
    const expected: ModelConfig = {
      name: 'simple',
      platform: 'onnxruntime_onnx',
      backend: '',
      version_policy: { latest: { num_versions: 1 } },
      max_batch_size: 8,
      input: [int32x16('INPUT0'), int32x16('INPUT1')],
      output: [out32x16('OUTPUT0'), out32x16('OUTPUT1')],
      instance_group: [],
      default_model_filename: '',
      parameters: {},
      extra: {},
    };
    expect(parseModelConfigText(SIMPLE_CONFIG_PBTXT)).toEqual(expected);
  });

  it('reads a densenet-style config: format, reshape, labels, groups, batching, policy, parameters', () => {
    const c = parseModelConfigText(DENSENET_CONFIG_PBTXT);
    expect(c.max_batch_size).toBe(0);
    expect(c.version_policy).toEqual({ specific: { versions: [1, 3] } });
    expect(c.input).toEqual([
      {
        name: 'data_0',
        data_type: 'TYPE_FP32',
        format: 'FORMAT_NCHW',
        dims: [3, 224, 224],
        reshape: { shape: [1, 3, 224, 224] },
        is_shape_tensor: false,
        allow_ragged_batch: false,
        optional: false,
      },
    ]);
    expect(c.output[0]).toMatchObject({ label_filename: 'densenet_labels.txt', reshape: { shape: [1, 1000, 1, 1] } });
    expect(c.instance_group).toEqual([{ name: '', kind: 'KIND_CPU', count: 2, gpus: [] }]);
    expect(c.dynamic_batching).toEqual({
      preferred_batch_size: [4, 8],
      max_queue_delay_microseconds: 100,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      default_queue_policy: {
        timeout_action: 'REJECT',
        default_timeout_microseconds: 0,
        allow_timeout_override: false,
        max_queue_size: 16,
      },
    });
    expect(c.parameters).toEqual({ x: { string_value: 'y' }, intra_op_thread_count: { string_value: '4' } });
  });

  it('keeps valid fields it does not model in extra, as compact protobuf JSON with real types', () => {
    const c = parseModelConfigText(DENSENET_CONFIG_PBTXT);
    expect(c.extra).toEqual({
      optimization: {
        graph: { level: 1 },
        priority: 'PRIORITY_MAX',
        execution_accelerators: {
          gpu_execution_accelerator: [
            { name: 'tensorrt', parameters: { precision_mode: 'FP16', max_workspace_size_bytes: '1073741824' } },
          ],
          cpu_execution_accelerator: [{ name: 'openvino' }],
        },
        input_pinned_memory: {},
      },
      // decoupled: False is the default, so only the (present) message remains.
      model_transaction_policy: {},
      response_cache: { enable: true },
    });
  });

  it('keeps a sequence model whole: one-element repeated fields stay arrays, oneof members keep presence', () => {
    const c = parseModelConfigText(SEQUENCE_CONFIG_PBTXT);
    expect(c.backend).toBe('onnxruntime');
    expect(c.dynamic_batching).toBeUndefined();
    expect(c.extra.sequence_batching).toEqual({
      max_sequence_idle_microseconds: 5000000,
      oldest: { max_candidate_sequences: 4, preferred_batch_size: [2, 4] },
      control_input: [
        { name: 'START', control: [{ fp32_false_true: [0, 1] }] },
        {
          name: 'READY',
          control: [{ kind: 'CONTROL_SEQUENCE_READY', int32_false_true: [0, 1], data_type: 'TYPE_INT32' }],
        },
      ],
      state: [
        {
          input_name: 'INPUT_STATE',
          output_name: 'OUTPUT_STATE',
          data_type: 'TYPE_INT32',
          dims: [1],
          initial_state: [{ name: 'zeros', data_type: 'TYPE_INT32', dims: [1], zero_data: false }],
        },
      ],
    });
    expect(c.extra.model_warmup).toEqual([
      { name: 'sample', batch_size: 1, inputs: { INPUT: { data_type: 'TYPE_INT32', dims: [1], random_data: true } } },
    ]);
  });

  it('keeps unmodelled fields of typed messages in their own extra, and reads odd-but-valid syntax', () => {
    const c = parseModelConfigText(NESTED_EXTRAS_PBTXT);
    expect(c.name).toBe('nested');
    expect(c.max_batch_size).toBe(16);
    expect(c.input[0]).toMatchObject({
      data_type: 'TYPE_INT32',
      dims: [-1, 4],
      allow_ragged_batch: true,
      extra: { is_non_linear_format_io: true },
    });
    expect(c.output[0]).toMatchObject({ data_type: 'TYPE_STRING', extra: { is_non_linear_format_io: true } });
    expect(c.instance_group[0]).toEqual({
      name: 'cpu',
      kind: 'KIND_CPU',
      count: 3,
      gpus: [],
      extra: { host_policy: 'policy_0', profile: ['0', '1'] },
    });
    expect(c.dynamic_batching?.extra).toEqual({
      priority_queue_policy: {
        1: { timeout_action: 'DELAY', default_timeout_microseconds: 1000 },
        2: { allow_timeout_override: true },
      },
    });
    expect(c.extra).toEqual({ cc_model_filenames: { '7.5': 'model_t4.onnx' }, metric_tags: { team: 'vision' } });
  });

  it('defaults an empty config, and an empty version_policy, to latest 1', () => {
    expect(parseModelConfigText('')).toEqual({
      name: '',
      platform: '',
      backend: '',
      version_policy: { latest: { num_versions: 1 } },
      max_batch_size: 0,
      input: [],
      output: [],
      instance_group: [],
      default_model_filename: '',
      parameters: {},
      extra: {},
    });
    expect(parseModelConfigText('version_policy {}').version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(parseModelConfigText('version_policy { all {} }').version_policy).toEqual({ all: {} });
    expect(parseModelConfigText('version_policy: { latest: { num_versions: 2 } }').version_policy).toEqual({
      latest: { num_versions: 2 },
    });
  });

  it('accepts enum numbers, every bool spelling, and uint64 map keys', () => {
    const c = parseModelConfigText(
      'input { name: "a" data_type: 11 is_shape_tensor: True optional: t allow_ragged_batch: 1 format: 2 }',
    );
    expect(c.input[0]).toMatchObject({
      data_type: 'TYPE_FP32',
      format: 'FORMAT_NCHW',
      is_shape_tensor: true,
      optional: true,
      allow_ragged_batch: true,
    });
  });
});

describe('parseModelConfigText: errors', () => {
  it.each([
    ['name: "m"\nfoo: 1', "config.pbtxt:2:1: unknown field 'foo' in ModelConfig"],
    ['input {\n  name: "a"\n  shape: [1]\n}', "config.pbtxt:3:3: unknown field 'shape' in ModelInput"],
    [
      'max_batch_size: "8"',
      'config.pbtxt:1:17: field \'max_batch_size\' in ModelConfig expects int32, found string "8"',
    ],
    ['max_batch_size: 1.5', "config.pbtxt:1:17: field 'max_batch_size' in ModelConfig expects int32, found 1.5"],
    [
      'max_batch_size: 3000000000',
      "config.pbtxt:1:17: field 'max_batch_size' in ModelConfig: 3000000000 is out of range for int32",
    ],
    [
      'version_policy { latest { num_versions: -1 } }',
      "config.pbtxt:1:41: field 'num_versions' in ModelVersionPolicy.Latest: -1 is out of range for uint32",
    ],
    [
      'input { dims: 9007199254740993 }',
      "config.pbtxt:1:15: field 'dims' in ModelInput: 9007199254740993 is beyond 2^53, the largest integer this server holds exactly",
    ],
    [
      'input { data_type: TYPE_FLOAT }',
      "config.pbtxt:1:20: unknown value 'TYPE_FLOAT' for field 'data_type' in ModelInput (DataType: TYPE_INVALID, TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16)",
    ],
    [
      'input { data_type: "TYPE_FP32" }',
      'config.pbtxt:1:20: unknown value string "TYPE_FP32" for field \'data_type\' in ModelInput (DataType: TYPE_INVALID, TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16)',
    ],
    [
      'instance_group { kind: 7 }',
      "config.pbtxt:1:24: unknown value 7 for field 'kind' in ModelInstanceGroup (ModelInstanceGroup.Kind: KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL)",
    ],
    [
      'name: "a"\nname: "b"',
      "config.pbtxt:2:7: field 'name' is set more than once in ModelConfig (it is not repeated)",
    ],
    [
      'max_batch_size: [8]',
      "config.pbtxt:1:1: field 'max_batch_size' in ModelConfig is not repeated; a list is not allowed",
    ],
    [
      'version_policy { all {} latest {} }',
      "config.pbtxt:1:25: 'latest' and 'all' are both set in ModelVersionPolicy, but only one of oneof 'policy_choice' may be",
    ],
    [
      'dynamic_batching {}\nsequence_batching {}',
      "config.pbtxt:2:1: 'sequence_batching' and 'dynamic_batching' are both set in ModelConfig, but only one of oneof 'scheduling_choice' may be",
    ],
    ['input: 5', "config.pbtxt:1:8: field 'input' in ModelConfig is a message: write 'input { ... }'"],
    ['name { }', "config.pbtxt:1:6: field 'name' in ModelConfig expects string, found a message"],
    ['input { is_shape_tensor: 2 }', "config.pbtxt:1:26: field 'is_shape_tensor' in ModelInput expects bool, found 2"],
    ['parameters { key: "a" val { } }', "config.pbtxt:1:23: unknown field 'val' in a map entry of 'parameters'"],
    ['parameters { key: 1 }', "config.pbtxt:1:19: field 'parameters.key' in ModelConfig expects string, found 1"],
    ['dims 16', "config.pbtxt:1:6: expected ':' or '{' after field name 'dims'"],
  ])('%j', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('leaves semantic checks (a negative max_batch_size) to validateConfigAgainstModel', () => {
    expect(parseModelConfigText('max_batch_size: -1').max_batch_size).toBe(-1);
  });

  it('names the file given as source', () => {
    expect(() => parseModelConfigText('foo: 1', 'models/simple/config.pbtxt')).toThrow(
      "models/simple/config.pbtxt:1:1: unknown field 'foo' in ModelConfig",
    );
  });
});
