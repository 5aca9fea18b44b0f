import { CLASSIFIER_LABELS } from '@nvcf/models';
import { encodeHttpInferRequest, type Tensor } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, outputOf, postInfer, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const infer = (model: string, body: Uint8Array | string, headers: Record<string, string> = {}) =>
  postInfer(fx.url, model, body, headers);

const text = new TextDecoder();

describe('classification extension', () => {
  const pixels = Float32Array.from({ length: 2 * 784 }, (_, i) => ((i * 7919) % 1000) / 1000);
  const input = (rows: number): Tensor => ({
    name: 'INPUT',
    datatype: 'FP32',
    shape: [rows, 784],
    data: pixels.subarray(0, rows * 784),
  });

  /** The expected top-k strings from the plain probabilities, as Triton's classification.cc prints them. */
  async function expectedTopK(rows: number, k: number, labels?: readonly string[]): Promise<string[][]> {
    const req = encodeHttpInferRequest({ inputs: [input(rows)] }, { binaryInputs: true, binaryDataOutput: true });
    const { decoded } = await infer('classifier', req.body, {
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
    });
    const probs = outputOf(decoded, 'PROBABILITIES').data as Float32Array;
    return Array.from({ length: rows }, (_, r) => {
      const row = [...probs.subarray(r * 10, r * 10 + 10)].map((p, i) => ({ p, i }));
      row.sort((a, b) => b.p - a.p || a.i - b.i);
      return row.slice(0, k).map(({ p, i }) => `${p.toFixed(6)}:${i}${labels ? `:${labels[i]}` : ''}`);
    });
  }

  it('answers the top N classes as BYTES "<value>:<index>" without labels', async () => {
    const req = encodeHttpInferRequest(
      { inputs: [input(1)] },
      { outputs: [{ name: 'PROBABILITIES', classification: 3 }] },
    );
    const { res, decoded } = await infer('classifier_unlabeled', req.body);
    expect(res.headers.get('content-type')).toBe('application/json');
    const out = outputOf(decoded, 'PROBABILITIES');
    expect(out.datatype).toBe('BYTES');
    expect(out.shape).toEqual([1, 3]);
    expect((out.data as Uint8Array[]).map((b) => text.decode(b))).toEqual((await expectedTopK(1, 3)).flat());
  });

  it('appends labels from label_filename, per batch item, JSON or binary', async () => {
    const expected = await expectedTopK(2, 4, CLASSIFIER_LABELS);
    for (const binary of [false, true]) {
      const req = encodeHttpInferRequest(
        { inputs: [input(2)] },
        { binaryInputs: binary, outputs: [{ name: 'PROBABILITIES', classification: 4, binary_data: binary }] },
      );
      const headers: Record<string, string> =
        req.inferenceHeaderContentLength === undefined
          ? {}
          : { 'inference-header-content-length': String(req.inferenceHeaderContentLength) };
      const { decoded } = await infer('classifier', req.body, headers);
      const out = outputOf(decoded, 'PROBABILITIES');
      expect(out.datatype).toBe('BYTES');
      expect(out.shape).toEqual([2, 4]);
      expect((out.data as Uint8Array[]).map((b) => text.decode(b))).toEqual(expected.flat());
    }
  });

  it('caps N at the number of classes and refuses a count that is not a non-negative integer', async () => {
    const req = encodeHttpInferRequest(
      { inputs: [input(1)] },
      { outputs: [{ name: 'PROBABILITIES', classification: 50 }] },
    );
    const { decoded } = await infer('classifier', req.body);
    expect(outputOf(decoded, 'PROBABILITIES').shape).toEqual([1, 10]);
    for (const bad of [-1, 1.5, '3', true]) {
      const body = JSON.stringify({
        inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: [...pixels.subarray(0, 784)] }],
        outputs: [{ name: 'PROBABILITIES', parameters: { classification: bad } }],
      });
      const res = await fetch(`${fx.url}/v2/models/classifier/infer`, { method: 'POST', body });
      expect(res.status, String(bad)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain('classification');
    }
  });
});
