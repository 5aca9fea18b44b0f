import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateExampleRepository, SIMPLE_CONFIG_PBTXT, scanModelRepository } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import { SessionCache } from '../runtime/session-cache.ts';

const silent = { info() {}, warn() {} };
const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
const FILES = ['simple/1/model.onnx', 'simple/config.pbtxt', 'classifier/1/model.onnx'];

let dir: string;
let cache: SessionCache;
let simple: LoadedModel;
let classifier: LoadedModel;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-examples-'));
  await generateExampleRepository(join(dir, 'a'));
  cache = new SessionCache({ executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, logger: silent });
  const entries = await scanModelRepository(join(dir, 'a'));
  expect(entries.map((e) => `${e.name}/${e.version}`)).toEqual(['classifier/1', 'simple/1']);
  [classifier, simple] = (await Promise.all(entries.map((e) => cache.load(e)))) as [LoadedModel, LoadedModel];
});

afterAll(async () => {
  await cache?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('generateExampleRepository', () => {
  it('writes Triton’s simple config next to the model', async () => {
    expect(await readFile(join(dir, 'a/simple/config.pbtxt'), 'utf8')).toBe(SIMPLE_CONFIG_PBTXT);
    expect(SIMPLE_CONFIG_PBTXT).toContain('max_batch_size: 8');
    expect(SIMPLE_CONFIG_PBTXT).toContain('platform: "onnxruntime_onnx"');
  });

  it('writes the same bytes every time, into a fresh directory or over an existing one', async () => {
    await generateExampleRepository(join(dir, 'b'));
    const first = await Promise.all(FILES.map((f) => sha256(join(dir, 'a', f))));
    expect(await Promise.all(FILES.map((f) => sha256(join(dir, 'b', f))))).toEqual(first);
    await generateExampleRepository(join(dir, 'a'));
    expect(await Promise.all(FILES.map((f) => sha256(join(dir, 'a', f))))).toEqual(first);
  });

  it('has a CLI that writes the repository to the given directory', async () => {
    const cli = join(import.meta.dirname, '../../../models/src/cli/generate-examples.ts');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, join(dir, 'cli')]);
    expect(stdout).toContain(join(dir, 'cli'));
    expect(await sha256(join(dir, 'cli/classifier/1/model.onnx'))).toBe(
      await sha256(join(dir, 'a/classifier/1/model.onnx')),
    );
  });
});

describe('simple', () => {
  it('reports Triton’s signature', () => {
    const int32x16 = (name: string) => ({ name, datatype: 'INT32', shape: [-1, 16] });
    expect(simple.inputs).toEqual([int32x16('INPUT0'), int32x16('INPUT1')]);
    expect(simple.outputs).toEqual([int32x16('OUTPUT0'), int32x16('OUTPUT1')]);
  });

  it.each([1, 3])('adds and subtracts a [%i,16] batch', async (batch) => {
    const a = Int32Array.from({ length: batch * 16 }, (_, i) => i);
    const b = Int32Array.from({ length: batch * 16 }, (_, i) => 1 + (i % 5));
    const [sum, diff] = await simple.run([
      { name: 'INPUT0', datatype: 'INT32', shape: [batch, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [batch, 16], data: b },
    ]);
    expect(sum).toMatchObject({ name: 'OUTPUT0', datatype: 'INT32', shape: [batch, 16] });
    expect(diff).toMatchObject({ name: 'OUTPUT1', datatype: 'INT32', shape: [batch, 16] });
    expect([...(sum!.data as Int32Array)]).toEqual([...a].map((x, i) => x + (b[i] as number)));
    expect([...(diff!.data as Int32Array)]).toEqual([...a].map((x, i) => x - (b[i] as number)));
  });

  it('returns only the requested outputs, in the requested order', async () => {
    const ones = (name: string): Tensor => ({
      name,
      datatype: 'INT32',
      shape: [1, 16],
      data: new Int32Array(16).fill(1),
    });
    const out = await simple.run([ones('INPUT0'), ones('INPUT1')], ['OUTPUT1', 'OUTPUT0']);
    expect(out.map((t) => t.name)).toEqual(['OUTPUT1', 'OUTPUT0']);
    expect((await simple.run([ones('INPUT0'), ones('INPUT1')], ['OUTPUT1'])).map((t) => t.name)).toEqual(['OUTPUT1']);
  });
});

describe('classifier', () => {
  it('gives one probability distribution per row, not a one-hot one', async () => {
    const rows = 4;
    const input = Float32Array.from({ length: rows * 784 }, (_, i) => ((i * 7919) % 256) / 255);
    const [probs] = await classifier.run([{ name: 'INPUT', datatype: 'FP32', shape: [rows, 784], data: input }]);
    expect(probs).toMatchObject({ name: 'PROBABILITIES', datatype: 'FP32', shape: [rows, 10] });
    const data = probs?.data as Float32Array;
    for (let r = 0; r < rows; r++) {
      const row = [...data.subarray(r * 10, r * 10 + 10)];
      expect(row.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 5);
      expect(Math.max(...row)).toBeLessThan(0.99);
      expect(Math.min(...row)).toBeGreaterThan(1e-4);
    }
  });
});
