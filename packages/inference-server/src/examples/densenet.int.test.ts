import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDensenetModel, parseModelConfigText, scanModelRepository, writeDensenetModel } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import { SessionCache } from '../runtime/session-cache.ts';

const silent = { info() {}, warn() {} };
let dir: string;
let cache: SessionCache;
let model: LoadedModel;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-densenet-'));
  await writeDensenetModel(dir);
  cache = new SessionCache({ executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, logger: silent });
  const [entry] = await scanModelRepository(dir);
  if (!entry) throw new Error('densenet_onnx not found');
  model = await cache.load(entry);
});
afterAll(async () => {
  await cache?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('densenet_onnx (DenseNet’s I/O, Triton’s image-classification examples)', () => {
  it("has DenseNet's input and output, a batch dimension and a 1000-line label file", async () => {
    expect(model.inputs).toEqual([{ name: 'data_0', datatype: 'FP32', shape: [-1, 3, 224, 224] }]);
    expect(model.outputs).toEqual([{ name: 'fc6_1', datatype: 'FP32', shape: [-1, 1000] }]);
    const config = parseModelConfigText(await readFile(join(dir, 'densenet_onnx', 'config.pbtxt'), 'utf8'));
    expect(config).toMatchObject({ name: 'densenet_onnx', max_batch_size: 8 });
    const labels = (await readFile(join(dir, 'densenet_onnx', 'densenet_labels.txt'), 'utf8')).trim().split('\n');
    expect(labels).toHaveLength(1000);
  });

  it('classifies a batch: one distribution over 1000 classes per image, the same for the same image', async () => {
    const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => ((i * 7919) % 255) / 255);
    const batch = new Float32Array(2 * image.length);
    batch.set(image, 0);
    batch.set(image, image.length);
    const [out] = await model.run([{ name: 'data_0', datatype: 'FP32', shape: [2, 3, 224, 224], data: batch }]);
    expect(out).toMatchObject({ name: 'fc6_1', datatype: 'FP32', shape: [2, 1000] });
    const probs = out?.data as Float32Array;
    const row = (r: number) => [...probs.subarray(r * 1000, (r + 1) * 1000)];
    expect(row(0).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    expect(row(1)).toEqual(row(0));
  });

  it('is the same bytes on every build (seeded weights)', () => {
    expect(Buffer.from(buildDensenetModel()).equals(Buffer.from(buildDensenetModel()))).toBe(true);
  });
});
