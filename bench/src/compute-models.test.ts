import { parseModelConfigText } from '@nvcf/models';
import { describe, expect, it } from 'vitest';
import { computeVariants, variantConfigText } from './compute-models.ts';

const BASE = `name: "densenet_onnx"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "data_0" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]
output [ { name: "fc6_1" data_type: TYPE_FP32 dims: [ 1000 ] } ]
`;

describe('variantConfigText', () => {
  it('renames the model and sets its instances and batching as the worker will read them', () => {
    const variants = computeVariants(250);
    const batched = parseModelConfigText(variantConfigText(BASE, variants.batched));
    expect(batched.name).toBe('densenet_batched');
    expect(batched.instance_group.map((g) => [g.kind, g.count])).toEqual([['KIND_CPU', 1]]);
    expect(batched.dynamic_batching?.max_queue_delay_microseconds).toBe(250);
    const two = parseModelConfigText(variantConfigText(BASE, variants.two));
    expect(two.name).toBe('densenet_2x');
    expect(two.instance_group.reduce((n, g) => n + g.count, 0)).toBe(2);
    expect(two.dynamic_batching).toBeUndefined();
    expect(two.max_batch_size).toBe(8);
  });

  it('refuses a config it cannot rename or that does not batch', () => {
    const variant = computeVariants(0).plain;
    expect(() => variantConfigText(BASE.replace('name: "densenet_onnx"\n', ''), variant)).toThrow(/no top-level name/);
    expect(() => variantConfigText(BASE.replace('max_batch_size: 8', 'max_batch_size: 0'), variant)).toThrow(
      /nothing to batch/,
    );
  });
});
