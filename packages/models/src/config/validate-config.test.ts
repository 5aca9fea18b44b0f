import type { TensorSpec } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import { autoCompleteConfig, type ModelSignatureInfo } from './auto-complete.ts';
import { parseModelConfigText } from './parse-model-config.ts';
import { DENSENET_CONFIG_PBTXT } from './test-configs.ts';
import { validateConfigAgainstModel } from './validate-config.ts';

const int32 = (name: string, shape: number[]): TensorSpec => ({ name, datatype: 'INT32', shape });
const SIMPLE: ModelSignatureInfo = {
  name: 'simple',
  inputs: [int32('INPUT0', [-1, 16]), int32('INPUT1', [-1, 16])],
  outputs: [int32('OUTPUT0', [-1, 16]), int32('OUTPUT1', [-1, 16])],
};

/** Completes `text` for `model` and validates it; returns the error message, or undefined if valid. */
function check(text: string, model: ModelSignatureInfo = SIMPLE): string | undefined {
  try {
    validateConfigAgainstModel(autoCompleteConfig(parseModelConfigText(text), model), model);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const simpleWith = (from: string, to: string) => SIMPLE_CONFIG_PBTXT.replace(from, to);

describe('validateConfigAgainstModel', () => {
  it('accepts simple with or without a config, and a config listing only some outputs', () => {
    expect(check(SIMPLE_CONFIG_PBTXT)).toBeUndefined();
    expect(check('')).toBeUndefined();
    expect(
      check(
        SIMPLE_CONFIG_PBTXT.slice(0, SIMPLE_CONFIG_PBTXT.indexOf('  {\n    name: "OUTPUT1"')).replace(/,\n$/, '\n]\n'),
      ),
    ).toBeUndefined();
  });

  it('compares reshape, not dims, with the model (densenet)', () => {
    const densenet: ModelSignatureInfo = {
      name: 'densenet_onnx',
      inputs: [{ name: 'data_0', datatype: 'FP32', shape: [1, 3, 224, 224] }],
      outputs: [{ name: 'fc6_1', datatype: 'FP32', shape: [1, 1000, 1, 1] }],
    };
    const text = DENSENET_CONFIG_PBTXT.replace(/dynamic_batching \{[^}]*\{[^}]*\}\n\}\n/, '');
    expect(check(text, densenet)).toBeUndefined();
  });

  it('lets a model dim of -1 accept any configured size, but not the other way round', () => {
    const dynamic: ModelSignatureInfo = {
      name: 'simple',
      inputs: [int32('INPUT0', [-1, -1]), int32('INPUT1', [-1, 16])],
      outputs: SIMPLE.outputs,
    };
    expect(check(SIMPLE_CONFIG_PBTXT, dynamic)).toBeUndefined();
    expect(check(simpleWith('dims: [ 16 ]', 'dims: [ -1 ]'))).toBe(
      "failed to load 'simple': tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0, then dims): shape [-1,-1]",
    );
  });

  it.each([
    [
      simpleWith('TYPE_INT32', 'TYPE_FP32'),
      "failed to load 'simple': configuration expects datatype TYPE_FP32 for input 'INPUT0', model provides TYPE_INT32",
    ],
    [
      simpleWith('"INPUT1"', '"INPUT9"'),
      "failed to load 'simple': unexpected inference input 'INPUT9', allowed inputs are: INPUT0, INPUT1",
    ],
    [
      simpleWith('"OUTPUT1"', '"SUM"'),
      "failed to load 'simple': unexpected inference output 'SUM', allowed outputs are: OUTPUT0, OUTPUT1",
    ],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ 8 ]'),
      "failed to load 'simple': tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0, then dims): shape [-1,8]",
    ],
    [
      simpleWith('max_batch_size: 8', 'max_batch_size: 0'),
      "failed to load 'simple': tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the model configuration specifies 1 dimensions: shape [16]",
    ],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ 4, 4 ]'),
      "failed to load 'simple': tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the model configuration specifies 3 dimensions (an initial batch dimension because max_batch_size > 0, then dims): shape [-1,4,4]",
    ],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ 16 ] reshape { shape: [ 2, 8 ] }'),
      "failed to load 'simple': tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the model configuration specifies 3 dimensions (an initial batch dimension because max_batch_size > 0, then dims): shape [-1,2,8]",
    ],
    [
      simpleWith('max_batch_size: 8', 'max_batch_size: -1'),
      "failed to load 'simple': 'max_batch_size' must be non-negative, got -1",
    ],
    [
      `${SIMPLE_CONFIG_PBTXT}dynamic_batching { preferred_batch_size: [ 16 ] }`,
      "failed to load 'simple': dynamic batching preferred size 16 exceeds max_batch_size 8",
    ],
    [
      `${SIMPLE_CONFIG_PBTXT}dynamic_batching { preferred_batch_size: [ 0 ] }`,
      "failed to load 'simple': dynamic batching preferred size must be positive, got 0",
    ],
    [
      `${SIMPLE_CONFIG_PBTXT}dynamic_batching { priority_levels: 2 default_priority_level: 3 }`,
      "failed to load 'simple': dynamic batching default_priority_level must be in [1, 2]",
    ],
    [simpleWith('dims: [ 16 ]', 'dims: [ ]'), "failed to load 'simple': input 'INPUT0' must specify 'dims'"],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ 0 ]'),
      "failed to load 'simple': input 'INPUT0': dimensions must be >= 1, or -1 for a variable size; got [0]",
    ],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ 16 ] reshape { shape: [ 3, 5 ] }'),
      "failed to load 'simple': input 'INPUT0': dims [16] and reshape [3,5] have different sizes",
    ],
    [
      simpleWith('dims: [ 16 ]', 'dims: [ -1 ] reshape { shape: [ 16 ] }'),
      "failed to load 'simple': input 'INPUT0': dims [-1] and reshape [16] have different sizes",
    ],
    [simpleWith('"INPUT1"', '"INPUT0"'), "failed to load 'simple': input 'INPUT0' is listed more than once"],
    [simpleWith('    data_type: TYPE_INT32\n', ''), "failed to load 'simple': input 'INPUT0' needs a data_type"],
  ])('%#: %s', (text, message) => {
    expect(check(text)).toBe(message);
  });

  it('compares outputs exactly: a model dim of -1 must be configured as -1', () => {
    const dynamic: ModelSignatureInfo = {
      ...SIMPLE,
      outputs: [int32('OUTPUT0', [-1, -1]), int32('OUTPUT1', [-1, 16])],
    };
    expect(check(SIMPLE_CONFIG_PBTXT, dynamic)).toBe(
      "failed to load 'simple': tensor 'OUTPUT0': the model expects 2 dimensions (shape [-1,-1]) but the model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0, then dims): shape [-1,16]",
    );
  });

  it('configures a scalar model tensor only as ones', () => {
    const scalar: ModelSignatureInfo = { name: 's', inputs: [int32('A', [])], outputs: [int32('B', [])] };
    expect(
      check(
        'input { name: "A" data_type: TYPE_INT32 dims: [1] } output { name: "B" data_type: TYPE_INT32 dims: [1, 1] }',
        scalar,
      ),
    ).toBeUndefined();
    expect(
      check(
        'input { name: "A" data_type: TYPE_INT32 dims: [2] } output { name: "B" data_type: TYPE_INT32 dims: [1] }',
        scalar,
      ),
    ).toBe("failed to load 's': scalar tensor 'A' must be configured with dims of 1, got [2]");
  });

  it('allows optional inputs only without batching, and ragged inputs only over a [-1] model shape', () => {
    expect(check(simpleWith('    dims: [ 16 ]\n', '    dims: [ 16 ]\n    optional: true\n'))).toBe(
      "failed to load 'simple': optional input 'INPUT0' is not supported for models that support batching",
    );
    expect(check(simpleWith('    dims: [ 16 ]\n', '    dims: [ 16 ]\n    allow_ragged_batch: true\n'))).toBe(
      "failed to load 'simple': ragged input 'INPUT0' needs a model shape of [-1], the model has [-1,16]",
    );
  });

  it('requires every model input in the config', () => {
    const oneInput = SIMPLE_CONFIG_PBTXT.replace(/,\n {2}\{\n {4}name: "INPUT1"[^}]*\}/, '');
    expect(check(oneInput)).toBe(
      "failed to load 'simple': the model has input 'INPUT1', which the configuration does not list",
    );
  });

  it('requires a -1 first model dim when the config batches', () => {
    const fixed: ModelSignatureInfo = {
      name: 'simple',
      inputs: [int32('INPUT0', [1, 16]), int32('INPUT1', [-1, 16])],
      outputs: SIMPLE.outputs,
    };
    expect(check(SIMPLE_CONFIG_PBTXT, fixed)).toBe(
      "failed to load 'simple': tensor 'INPUT0': for the model to support batching the shape should have at least 1 dimension and the first dimension must be -1; but shape expected by the model is [1,16]",
    );
  });
});
