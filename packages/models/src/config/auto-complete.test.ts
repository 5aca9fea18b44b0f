import type { Datatype, TensorSpec } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import { autoCompleteConfig, type ModelSignatureInfo } from './auto-complete.ts';
import { normalizeInstanceGroups } from './instance-groups.ts';
import type { ModelConfig } from './model-config.ts';
import { parseModelConfigJson, parseModelConfigText } from './parse-model-config.ts';
import { modelConfigToJson } from './print-model-config.ts';
import { TRITON_AUTOCOMPLETED_JSON, withNonLinearFlag } from './test-configs.ts';

const spec = (name: string, shape: number[], datatype: Datatype = 'INT32'): TensorSpec => ({ name, datatype, shape });

/** The `simple` model as ONNX Runtime reports it: INT32 [batch,16] everywhere. */
const SIMPLE: ModelSignatureInfo = {
  name: 'simple',
  inputs: [spec('INPUT0', [-1, 16]), spec('INPUT1', [-1, 16])],
  outputs: [spec('OUTPUT0', [-1, 16]), spec('OUTPUT1', [-1, 16])],
};

/** A model without a batch dimension. */
const FIXED: ModelSignatureInfo = { name: 'fixed', inputs: [spec('X', [16])], outputs: [spec('Y', [16])] };

const failure = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
};

describe('autoCompleteConfig: no config at all', () => {
  it('completes simple to max_batch_size 4, dims without the batch dim, dynamic batching and two CPU instances', () => {
    const c = autoCompleteConfig(undefined, SIMPLE);
    expect(c).toMatchObject({
      name: 'simple',
      platform: 'onnxruntime_onnx',
      backend: 'onnxruntime',
      default_model_filename: 'model.onnx',
      version_policy: { latest: { num_versions: 1 } },
      max_batch_size: 4,
      instance_group: [{ name: 'simple', kind: 'KIND_CPU', count: 2, gpus: [] }],
      dynamic_batching: {
        preferred_batch_size: [4],
        max_queue_delay_microseconds: 0,
        preserve_ordering: false,
        priority_levels: 0,
        default_priority_level: 0,
      },
      extra: { optimization: { input_pinned_memory: { enable: true }, output_pinned_memory: { enable: true } } },
    });
    expect(c.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['INPUT0', 'TYPE_INT32', [16]],
      ['INPUT1', 'TYPE_INT32', [16]],
    ]);
    expect(c.output.map((o) => [o.name, o.data_type, o.dims])).toEqual([
      ['OUTPUT0', 'TYPE_INT32', [16]],
      ['OUTPUT1', 'TYPE_INT32', [16]],
    ]);
  });

  it('answers the config endpoint exactly as Triton does for an auto-completed ONNX model', () => {
    const model: ModelSignatureInfo = {
      name: 'model_test',
      inputs: [spec('images', [-1, 3, -1, -1], 'FP32')],
      outputs: [spec('output', [-1, 10], 'FP32')],
    };
    const json = modelConfigToJson(autoCompleteConfig(undefined, model));
    expect(JSON.stringify(json)).toBe(withNonLinearFlag(TRITON_AUTOCOMPLETED_JSON));
  });

  it('uses the configured default max batch size', () => {
    expect(
      autoCompleteConfig(undefined, SIMPLE, { defaultMaxBatchSize: 16 }).dynamic_batching?.preferred_batch_size,
    ).toEqual([16]);
    const off = autoCompleteConfig(undefined, SIMPLE, { defaultMaxBatchSize: 0 });
    expect(off.max_batch_size).toBe(0);
    expect(off.input[0]!.dims).toEqual([-1, 16]);
    expect(off.dynamic_batching).toBeUndefined();
  });

  it('keeps the full shape and adds no batching for a model without a batch dim', () => {
    const c = autoCompleteConfig(undefined, FIXED);
    expect(c.max_batch_size).toBe(0);
    expect(c.input[0]!.dims).toEqual([16]);
    expect(c.dynamic_batching).toBeUndefined();
  });

  it('maps BYTES to TYPE_STRING and gives scalars dims [1] (with an empty reshape when batching)', () => {
    const strings: ModelSignatureInfo = {
      name: 's',
      inputs: [spec('T', [-1], 'BYTES')],
      outputs: [spec('U', [-1, 2], 'FP16')],
    };
    const c = autoCompleteConfig(undefined, strings);
    expect(c.input[0]).toMatchObject({ data_type: 'TYPE_STRING', dims: [1], reshape: { shape: [] } });
    expect(c.output[0]).toMatchObject({ data_type: 'TYPE_FP16', dims: [2] });
    const scalar: ModelSignatureInfo = { name: 'z', inputs: [spec('A', [])], outputs: [spec('B', [])] };
    const z = autoCompleteConfig(undefined, scalar);
    expect(z.max_batch_size).toBe(0);
    expect(z.input[0]!.dims).toEqual([1]);
    expect(z.input[0]!.reshape).toBeUndefined();
  });
});

describe('autoCompleteConfig: with a config', () => {
  it('leaves inputs, outputs and batching alone when the config lists both (as the ORT backend does)', () => {
    const c = autoCompleteConfig(parseModelConfigText(SIMPLE_CONFIG_PBTXT), SIMPLE);
    expect(c.max_batch_size).toBe(8);
    expect(c.dynamic_batching).toBeUndefined();
    expect(c.input).toEqual(parseModelConfigText(SIMPLE_CONFIG_PBTXT).input);
    expect(c.backend).toBe('onnxruntime');
    expect(c.instance_group).toEqual([{ name: 'simple', kind: 'KIND_CPU', count: 2, gpus: [] }]);
  });

  it('keeps an explicit max_batch_size 0 when inputs and outputs are listed', () => {
    const text = SIMPLE_CONFIG_PBTXT.replace('max_batch_size: 8', 'max_batch_size: 0').replaceAll(
      '[ 16 ]',
      '[ -1, 16 ]',
    );
    const c = autoCompleteConfig(parseModelConfigText(text), SIMPLE);
    expect(c.max_batch_size).toBe(0);
    expect(c.input[0]!.dims).toEqual([-1, 16]);
    expect(c.dynamic_batching).toBeUndefined();
  });

  it('treats max_batch_size 0 without inputs/outputs as unset, like Triton (proto3 cannot tell them apart)', () => {
    expect(autoCompleteConfig(parseModelConfigText('max_batch_size: 0'), SIMPLE).max_batch_size).toBe(4);
    expect(autoCompleteConfig({ max_batch_size: 0 }, SIMPLE).max_batch_size).toBe(4);
  });

  it('fills inputs/outputs for a load override {"max_batch_size":"16"} and turns on dynamic batching', () => {
    const c = autoCompleteConfig(parseModelConfigJson('{"max_batch_size":"16"}'), SIMPLE);
    expect(c.max_batch_size).toBe(16);
    expect(c.input[0]!.dims).toEqual([16]);
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([16]);
  });

  it('adds no dynamic batching for max_batch_size 1, or when a sequence batcher is configured', () => {
    expect(autoCompleteConfig({ max_batch_size: 1 }, SIMPLE).dynamic_batching).toBeUndefined();
    const seq = autoCompleteConfig(parseModelConfigText('max_batch_size: 4 sequence_batching { }'), SIMPLE);
    expect(seq.dynamic_batching).toBeUndefined();
    expect(seq.extra.sequence_batching).toEqual({ max_sequence_idle_microseconds: 1_000_000 });
  });

  it('completes only the missing side', () => {
    const c = autoCompleteConfig(
      parseModelConfigText('max_batch_size: 2 input { name: "INPUT0" data_type: TYPE_INT32 dims: 16 }'),
      SIMPLE,
    );
    expect(c.input.map((i) => i.name)).toEqual(['INPUT0']);
    expect(c.output.map((o) => [o.name, o.dims])).toEqual([
      ['OUTPUT0', [16]],
      ['OUTPUT1', [16]],
    ]);
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([2]);
  });

  it('keeps a configured dynamic_batching, filling preferred sizes only when none are given', () => {
    const given = autoCompleteConfig(
      parseModelConfigText('max_batch_size: 8 dynamic_batching { preferred_batch_size: [2] }'),
      SIMPLE,
    );
    expect(given.dynamic_batching?.preferred_batch_size).toEqual([2]);
    const empty = autoCompleteConfig(parseModelConfigText(`${SIMPLE_CONFIG_PBTXT}dynamic_batching {}`), SIMPLE);
    expect(empty.dynamic_batching?.preferred_batch_size).toEqual([8]);
  });

  it('keeps configured optimization settings and adds only the missing pinned-memory defaults', () => {
    const c = autoCompleteConfig(
      parseModelConfigText('optimization { input_pinned_memory { enable: false } graph { level: 1 } }'),
      SIMPLE,
    );
    expect(c.extra.optimization).toEqual({
      input_pinned_memory: {},
      graph: { level: 1 },
      output_pinned_memory: { enable: true },
    });
  });

  it('accepts a partial config object and never mutates what it is given', () => {
    const partial: Partial<ModelConfig> = { max_batch_size: 8, parameters: { a: { string_value: 'b' } } };
    const before = structuredClone(partial);
    const c = autoCompleteConfig(partial, SIMPLE);
    expect(partial).toEqual(before);
    expect(c.parameters).toEqual({ a: { string_value: 'b' } });
    const parsed = parseModelConfigText(SIMPLE_CONFIG_PBTXT);
    const copy = structuredClone(parsed);
    autoCompleteConfig(parsed, SIMPLE);
    expect(parsed).toEqual(copy);
  });
});

describe('autoCompleteConfig: load errors', () => {
  it('refuses a non-zero max_batch_size for a model that cannot batch', () => {
    expect(failure(() => autoCompleteConfig({ max_batch_size: 8 }, FIXED))).toBe(
      "failed to load 'fixed': model does not support batching while non-zero max_batch_size is specified",
    );
    const mixed: ModelSignatureInfo = { name: 'mixed', inputs: [spec('A', [-1, 4])], outputs: [spec('B', [4])] };
    expect(() => autoCompleteConfig({ max_batch_size: 2 }, mixed)).toThrow('does not support batching');
  });

  it('refuses a config whose name is not the directory name', () => {
    expect(failure(() => autoCompleteConfig(parseModelConfigText('name: "other"'), SIMPLE))).toBe(
      "failed to load 'simple': the config names the model 'other', but its directory is 'simple'",
    );
    expect(autoCompleteConfig(parseModelConfigText('name: "simple"'), SIMPLE).name).toBe('simple');
  });

  it('takes the identity backend as its config says, with no platform and no model file, and refuses it without tensors', () => {
    const text = `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]`;
    const c = autoCompleteConfig(parseModelConfigText(text), SIMPLE);
    expect(c).toMatchObject({ backend: 'identity', platform: '', default_model_filename: '', max_batch_size: 8 });
    expect(() => autoCompleteConfig({ backend: 'identity' }, SIMPLE)).toThrow(
      'the identity backend needs inputs and outputs in the config',
    );
  });

  it('refuses other platforms and backends', () => {
    expect(failure(() => autoCompleteConfig({ platform: 'tensorrt_plan' }, SIMPLE))).toBe(
      "failed to load 'simple': platform 'tensorrt_plan' is not supported (only 'onnxruntime_onnx')",
    );
    expect(() => autoCompleteConfig({ backend: 'python' }, SIMPLE)).toThrow("backend 'python' is not supported");
  });

  it('is an INVALID_ARGUMENT AppError', () => {
    expect(() => autoCompleteConfig({ max_batch_size: 8 }, FIXED)).toThrow(
      expect.objectContaining({ name: 'ModelConfigError', code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('normalizeInstanceGroups', () => {
  const group = (over: Partial<ModelConfig['instance_group'][number]>) => ({
    name: '',
    kind: 'KIND_AUTO' as const,
    count: 0,
    gpus: [],
    ...over,
  });

  it('names unnamed groups <model>_<index>, keeps given names, gives KIND_CPU 2 instances and others 1', () => {
    const groups = normalizeInstanceGroups(
      [group({ kind: 'KIND_CPU' }), group({ name: 'mine', kind: 'KIND_MODEL' }), group({ kind: 'KIND_CPU', count: 3 })],
      'm',
    );
    expect(groups).toEqual([
      { name: 'm_0', kind: 'KIND_CPU', count: 2, gpus: [] },
      { name: 'mine', kind: 'KIND_MODEL', count: 1, gpus: [] },
      { name: 'm_2', kind: 'KIND_CPU', count: 3, gpus: [] },
    ]);
  });

  it('gives a KIND_CPU group without a count the CPU instance count the server sets', () => {
    expect(normalizeInstanceGroups([], 'm', [], 4)).toEqual([{ name: 'm', kind: 'KIND_CPU', count: 4, gpus: [] }]);
    expect(normalizeInstanceGroups([group({ kind: 'KIND_CPU', count: 3 })], 'm', [], 4)[0]?.count).toBe(3);
    expect(normalizeInstanceGroups([group({ kind: 'KIND_GPU' })], 'm', [0], 4)[0]?.count).toBe(1);
  });

  it('resolves KIND_AUTO to KIND_GPU on every GPU when GPUs exist, to KIND_CPU otherwise', () => {
    expect(normalizeInstanceGroups([], 'm', [0, 1])).toEqual([{ name: 'm', kind: 'KIND_GPU', count: 1, gpus: [0, 1] }]);
    expect(normalizeInstanceGroups([group({ gpus: [3] })], 'm', [0])).toEqual([
      { name: 'm_0', kind: 'KIND_CPU', count: 2, gpus: [3] },
    ]);
  });

  it('refuses KIND_GPU without the GPUs it needs', () => {
    expect(() => normalizeInstanceGroups([group({ kind: 'KIND_GPU' })], 'm')).toThrow(
      "failed to load 'm': instance group 'm_0' (KIND_GPU) needs a GPU, and none is available",
    );
    expect(() => normalizeInstanceGroups([group({ kind: 'KIND_GPU', gpus: [2] })], 'm', [0])).toThrow(
      'needs GPU 2, which is not available',
    );
  });

  it('keeps the extra fields of a group', () => {
    const [g] = normalizeInstanceGroups([group({ kind: 'KIND_CPU', extra: { host_policy: 'p' } })], 'm');
    expect(g?.extra).toEqual({ host_policy: 'p' });
  });
});
