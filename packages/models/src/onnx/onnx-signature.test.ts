import { AppError } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { buildClassifierModel } from '../examples/classifier.ts';
import { buildSimpleModel } from '../examples/simple.ts';
import { readOnnxSignature } from './onnx-signature.ts';

describe('readOnnxSignature', () => {
  it('reads inputs and outputs of generated models, dynamic dims as -1, without initializers', () => {
    expect(readOnnxSignature(buildSimpleModel())).toEqual({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      opset: 17,
    });
    const c = readOnnxSignature(buildClassifierModel());
    expect(c.inputs).toEqual([{ name: 'INPUT', datatype: 'FP32', shape: [-1, 784] }]);
    expect(c.outputs).toEqual([{ name: 'PROBABILITIES', datatype: 'FP32', shape: [-1, 10] }]);
  });

  it('refuses bytes that are not a model', () => {
    for (const bytes of [
      new Uint8Array(),
      Buffer.from('not a model at all'),
      new Uint8Array([0xff, 0xff, 0xff, 0xff]),
    ]) {
      expect(() => readOnnxSignature(bytes)).toThrow(AppError);
    }
  });
});
