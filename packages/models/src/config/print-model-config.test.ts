import { describe, expect, it } from 'vitest';
import { SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import { parseModelConfigJson, parseModelConfigText } from './parse-model-config.ts';
import { modelConfigToJson, modelConfigToProto, modelConfigToText } from './print-model-config.ts';
import {
  DENSENET_CONFIG_PBTXT,
  NESTED_EXTRAS_PBTXT,
  SEQUENCE_CONFIG_PBTXT,
  TRITON_AUTOCOMPLETED_JSON,
  withNonLinearFlag,
} from './test-configs.ts';

const EXAMPLES = {
  simple: SIMPLE_CONFIG_PBTXT,
  densenet: DENSENET_CONFIG_PBTXT,
  sequence: SEQUENCE_CONFIG_PBTXT,
  nested: NESTED_EXTRAS_PBTXT,
  empty: '',
};

describe('modelConfigToText', () => {
  it.each(Object.entries(EXAMPLES))('round-trips %s: text → config → text → config', (_, text) => {
    const config = parseModelConfigText(text);
    const printed = modelConfigToText(config);
    expect(parseModelConfigText(printed)).toEqual(config);
    expect(modelConfigToText(parseModelConfigText(printed))).toBe(printed);
  });

  it('writes simple in Triton’s style, with the default version policy made explicit', () => {
    const expected = SIMPLE_CONFIG_PBTXT.replace(
      'max_batch_size: 8',
      'version_policy {\n  latest {\n    num_versions: 1\n  }\n}\nmax_batch_size: 8',
    );
    expect(modelConfigToText(parseModelConfigText(SIMPLE_CONFIG_PBTXT))).toBe(expected);
  });

  it('prints enums bare and strings quoted wherever they sit, extras included', () => {
    const text = modelConfigToText(parseModelConfigText(DENSENET_CONFIG_PBTXT));
    expect(text).toContain('    format: FORMAT_NCHW\n');
    expect(text).toContain('  priority: PRIORITY_MAX\n');
    expect(text).toContain('          key: "precision_mode"\n          value: "FP16"\n');
    expect(text).toContain('  preferred_batch_size: [ 4, 8 ]\n');
    expect(text).toContain('parameters {\n  key: "x"\n  value {\n    string_value: "y"\n  }\n}\n');
  });

  it('prints uint64 map keys as integers', () => {
    const text = modelConfigToText(parseModelConfigText(NESTED_EXTRAS_PBTXT));
    expect(text).toContain('  priority_queue_policy {\n    key: 1\n    value {\n      timeout_action: DELAY\n');
  });
});

describe('modelConfigToJson', () => {
  it('prints Triton’s config endpoint JSON byte for byte (field order, defaults, enums)', () => {
    const config = parseModelConfigJson(TRITON_AUTOCOMPLETED_JSON);
    expect(JSON.stringify(modelConfigToJson(config))).toBe(withNonLinearFlag(TRITON_AUTOCOMPLETED_JSON));
  });

  it.each(Object.entries(EXAMPLES))('round-trips %s: config → JSON → config and JSON → config → JSON', (_, text) => {
    const config = parseModelConfigText(text);
    const json = modelConfigToJson(config);
    expect(parseModelConfigJson(json)).toEqual(config);
    expect(modelConfigToJson(parseModelConfigJson(json))).toEqual(json);
    expect(parseModelConfigJson(JSON.stringify(json))).toEqual(config);
  });

  it('prints every default, leaves unset messages and oneof members out', () => {
    const json = modelConfigToJson(parseModelConfigText('name: "m"'));
    expect(Object.keys(json)).toEqual([
      'name',
      'platform',
      'backend',
      'runtime',
      'version_policy',
      'max_batch_size',
      'input',
      'output',
      'batch_input',
      'batch_output',
      'instance_group',
      'default_model_filename',
      'cc_model_filenames',
      'metric_tags',
      'parameters',
      'model_warmup',
    ]);
    expect(json.version_policy).toEqual({ latest: { num_versions: 1 } });
  });

  it('prints int64 as JSON numbers by default, as strings on request (proto3 JSON)', () => {
    const config = parseModelConfigText(DENSENET_CONFIG_PBTXT);
    const numbers = modelConfigToJson(config);
    expect((numbers.input as { dims: unknown }[])[0]!.dims).toEqual([3, 224, 224]);
    expect(numbers.dynamic_batching).toMatchObject({ max_queue_delay_microseconds: 100, preferred_batch_size: [4, 8] });
    const strings = modelConfigToJson(config, { int64: 'string' });
    expect((strings.input as { dims: unknown }[])[0]!.dims).toEqual(['3', '224', '224']);
    expect(strings.version_policy).toEqual({ specific: { versions: ['1', '3'] } });
    // int32 stays a number in proto3 JSON; defaults of 64-bit fields turn into strings too.
    expect(strings.dynamic_batching).toMatchObject({ preferred_batch_size: [4, 8], priority_levels: '0' });
  });

  it('merges extra fields in their schema places, with defaults printed inside them', () => {
    const json = modelConfigToJson(parseModelConfigText(SEQUENCE_CONFIG_PBTXT));
    const keys = Object.keys(json);
    const at = keys.indexOf('batch_output');
    expect(keys.slice(at, at + 3)).toEqual(['batch_output', 'sequence_batching', 'instance_group']);
    expect(json.sequence_batching).toMatchObject({
      control_input: [
        { name: 'START', control: [{ kind: 'CONTROL_SEQUENCE_START', fp32_false_true: [0, 1], int32_false_true: [] }] },
        { name: 'READY' },
      ],
      iterative_sequence: false,
    });
  });

  it('prints non-finite floats as protobuf JSON strings', () => {
    const config = parseModelConfigText('sequence_batching { direct { minimum_slot_utilization: inf } }');
    expect(modelConfigToJson(config).sequence_batching).toEqual({
      direct: { max_queue_delay_microseconds: 0, minimum_slot_utilization: 'Infinity' },
      max_sequence_idle_microseconds: 0,
      control_input: [],
      state: [],
      iterative_sequence: false,
    });
    expect(parseModelConfigJson(modelConfigToJson(config))).toEqual(config);
  });

  it('refuses to print a hand-built extra that is not a ModelConfig field', () => {
    const config = { ...parseModelConfigText(''), extra: { colour: 'blue' } };
    expect(() => modelConfigToJson(config)).toThrow("unknown field 'colour' in ModelConfig");
    const badType = { ...parseModelConfigText(''), extra: { response_cache: { enable: 'yes' } } };
    expect(() => modelConfigToText(badType)).toThrow('response_cache.enable: expected true or false, got "yes"');
  });
});

describe('modelConfigToProto', () => {
  it('is compact: defaults left out, present messages kept', () => {
    expect(modelConfigToProto(parseModelConfigText('name: "m" dynamic_batching {} max_batch_size: 0'))).toEqual({
      name: 'm',
      version_policy: { latest: { num_versions: 1 } },
      dynamic_batching: {},
    });
  });
});

describe('parseModelConfigJson', () => {
  it('reads a partial load override with int32 given as a string', () => {
    const c = parseModelConfigJson({ max_batch_size: '16' });
    expect(c.max_batch_size).toBe(16);
    expect(c).toEqual({ ...parseModelConfigText(''), max_batch_size: 16 });
  });

  it('parses a JSON string (what the load request carries)', () => {
    expect(parseModelConfigJson('{"max_batch_size":"16"}').max_batch_size).toBe(16);
  });

  it('accepts lowerCamelCase names, numeric strings and numbers for int64, enum numbers, and null as default', () => {
    const c = parseModelConfigJson({
      maxBatchSize: 4,
      versionPolicy: { latest: { numVersions: '2' } },
      input: [{ name: 'a', dataType: 11, dims: ['16', -1], reshape: null }],
      instance_group: [{ kind: 'KIND_CPU', count: '1', gpus: [] }],
      dynamic_batching: { max_queue_delay_microseconds: '100', priority_queue_policy: { 1: { max_queue_size: 3 } } },
      name: null,
    });
    expect(c.max_batch_size).toBe(4);
    expect(c.version_policy).toEqual({ latest: { num_versions: 2 } });
    expect(c.input[0]).toMatchObject({ data_type: 'TYPE_FP32', dims: [16, -1] });
    expect(c.input[0]!.reshape).toBeUndefined();
    expect(c.instance_group[0]).toEqual({ name: '', kind: 'KIND_CPU', count: 1, gpus: [] });
    expect(c.dynamic_batching).toMatchObject({
      max_queue_delay_microseconds: 100,
      extra: { priority_queue_policy: { 1: { max_queue_size: 3 } } },
    });
  });

  it('skips the oneof discriminators protobufjs adds (a gRPC ModelConfig sent back as an override)', () => {
    const fromGrpcClient = {
      version_policy: { all: {}, policy_choice: 'all' },
      scheduling_choice: 'dynamic_batching',
      dynamic_batching: {},
    };
    const c = parseModelConfigJson(fromGrpcClient);
    expect(c.version_policy).toEqual({ all: {} });
    expect(c.dynamic_batching).toBeDefined();
    expect(() => parseModelConfigJson({ policy_choice: 'all' })).toThrow(
      "unknown field 'policy_choice' in ModelConfig",
    );
    expect(() => parseModelConfigJson({ scheduling_choice: 'colour' })).toThrow("unknown field 'scheduling_choice'");
  });

  it.each([
    [{ foo: 1 }, "unknown field 'foo' in ModelConfig"],
    [{ input: [{ name: 'a', shape: [1] }] }, "input[0]: unknown field 'shape' in ModelInput"],
    [{ input: [{ dims: [1, 'x'] }] }, 'input[0].dims[1]: expected an integer (int64), got "x"'],
    [{ max_batch_size: 'sixteen' }, 'max_batch_size: expected an integer (int32), got "sixteen"'],
    [{ max_batch_size: 1.5 }, 'max_batch_size: expected an integer (int32), got 1.5'],
    [{ max_batch_size: '4294967296' }, 'max_batch_size: 4294967296 is out of range for int32'],
    [
      { input: [{ dims: [2 ** 60] }] },
      'input[0].dims[0]: 1152921504606847000 is beyond 2^53; send 64-bit values as strings',
    ],
    [{ input: [{ data_type: 'FP32' }] }, 'input[0].data_type: unknown value "FP32" for enum DataType'],
    [{ input: { name: 'a' } }, 'input: expected an array, got {"name":"a"}'],
    [{ input: [null] }, 'input[0]: null is not allowed here (message ModelInput)'],
    [{ parameters: { a: 'b' } }, 'parameters["a"]: expected a JSON object for ModelParameter, got "b"'],
    [{ response_cache: { enable: 'true' } }, 'response_cache.enable: expected true or false, got "true"'],
    [{ dynamic_batching: {}, sequence_batching: {} }, "'sequence_batching' and 'dynamic_batching' are both set"],
    [{ max_batch_size: 1, maxBatchSize: 2 }, "field 'max_batch_size' is given twice in ModelConfig"],
    [{ dynamic_batching: { priority_queue_policy: { one: {} } } }, "map key 'one' is not an integer (uint64)"],
    [[], 'expected a JSON object for ModelConfig, got an array'],
    ['{"max_batch_size":', 'not valid JSON'],
    [42, 'expected a JSON object for ModelConfig, got 42'],
  ])('%j → %s', (json, message) => {
    expect(() => parseModelConfigJson(json)).toThrow(message);
  });

  it('throws ModelConfigError, an INVALID_ARGUMENT AppError', () => {
    expect(() => parseModelConfigJson({ foo: 1 })).toThrow(
      expect.objectContaining({ name: 'ModelConfigError', code: 'INVALID_ARGUMENT' }),
    );
  });
});
