import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { AppError, type Tensor } from '@nvcf/protocol';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceCore } from './core-types.ts';
import { startInferenceCore } from './create-core.ts';

let dir: string;
let core: InferenceCore;

const int32 = (name: string, values: number[], shape: number[]): Tensor => ({
  name,
  datatype: 'INT32',
  shape,
  data: Int32Array.from(values),
});
const simpleInputs = (rows = 1) => [
  int32(
    'INPUT0',
    Array.from({ length: 16 * rows }, (_, i) => i),
    [rows, 16],
  ),
  int32('INPUT1', Array(16 * rows).fill(1), [rows, 16]),
];
const codeOf = async (p: Promise<unknown> | (() => unknown)) => {
  try {
    await (typeof p === 'function' ? p() : p);
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-core-'));
  await generateExampleRepository(dir);
  core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    createLogger({ name: 'test', level: 'silent' }),
  );
});
afterAll(async () => {
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('inference core', () => {
  it('serves the repository with Triton metadata: batch dim -1 from max_batch_size', () => {
    expect(core.isLive()).toBe(true);
    expect(core.isReady()).toBe(true);
    expect(core.modelMetadata('simple')).toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
    });
    expect(core.modelConfig('simple').max_batch_size).toBe(8);
    expect(core.modelMetadata('simple').properties).toBeUndefined();
    expect(core.modelBatches('simple')).toBe(true);
  });

  it('says where the server is in its life and which versions each model has', () => {
    expect(core.serverState()).toBe('READY');
    expect(core.versionStates('simple')).toEqual([{ version: '1', state: 'READY', reason: '' }]);
    expect(core.versionStates('never-loaded')).toEqual([]);
  });

  it('runs simple and counts it in the statistics', async () => {
    const before = core.statistics('simple', '1')[0];
    const res = await core.infer({ modelName: 'simple', id: 'x', inputs: simpleInputs(2) });
    expect(res).toMatchObject({ modelName: 'simple', modelVersion: '1', id: 'x' });
    expect(Array.from(res.outputs[0]?.data as Int32Array).slice(0, 3)).toEqual([1, 2, 3]);
    expect(Array.from(res.outputs[1]?.data as Int32Array).slice(0, 3)).toEqual([-1, 0, 1]);
    const after = core.statistics('simple', '1')[0];
    expect((after?.inference_count ?? 0) - (before?.inference_count ?? 0)).toBe(2);
    expect((after?.execution_count ?? 0) - (before?.execution_count ?? 0)).toBe(1);
    expect(after?.inference_stats.compute_infer.ns).toBeGreaterThan(0);
  });

  it('moves the inputs to the model instance only when the caller gives them away', async () => {
    const kept = simpleInputs(1);
    await core.infer({ modelName: 'simple', inputs: kept });
    expect(kept[0]?.data.length).toBe(16);
    const given = simpleInputs(1);
    const res = await core.infer({ modelName: 'simple', inputs: given, inputsOwned: true });
    expect(given[0]?.data.length).toBe(0);
    expect(res.outputs[0]?.data).toHaveLength(16);
  });

  it('refuses with Triton texts: unknown model, unknown version, batch over max_batch_size', async () => {
    expect(await codeOf(core.infer({ modelName: 'nope', inputs: [] }))).toBe(
      "INVALID_ARGUMENT: Request for unknown model: 'nope' is not found",
    );
    expect(await codeOf(() => core.modelMetadata('simple', '7'))).toMatch(
      /^UNAVAILABLE: Request for unknown model: 'simple' version 7 is not at ready state/,
    );
    expect(await codeOf(core.infer({ modelName: 'simple', inputs: simpleInputs(9) }))).toMatch(
      /INVALID_ARGUMENT: .*batch-size must be <= 8/,
    );
    const failures = core.statistics('simple')[0]?.inference_stats.fail.count ?? 0;
    expect(failures).toBeGreaterThan(0);
  });

  it('classifies with labels from the config', async () => {
    const input: Tensor = { name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: new Float32Array(784).fill(0.5) };
    const res = await core.infer({
      modelName: 'classifier',
      inputs: [input],
      outputs: [{ name: 'PROBABILITIES', classification: 3 }],
    });
    const out = res.outputs[0];
    expect(out?.datatype).toBe('BYTES');
    expect(out?.shape).toEqual([1, 3]);
    const texts = ((out?.data ?? []) as Uint8Array[]).map((b) => Buffer.from(b).toString());
    for (const t of texts) expect(t).toMatch(/^\d\.\d{6}:\d:[a-z]+$/);
  });

  it('unloads, reloads with a config override, and refuses a bad override', async () => {
    const changes: string[] = [];
    core.onChange((name) => changes.push(name));
    await core.unloadModel('simple');
    expect(core.isModelReady('simple')).toBe(false);
    expect((await core.repositoryIndex()).find((e) => e.name === 'simple')).toMatchObject({ state: 'UNAVAILABLE' });
    // An unloaded version is remembered as UNAVAILABLE (Triton v1 status), until the model serves it again.
    expect(core.versionStates('simple')).toEqual([{ version: '1', state: 'UNAVAILABLE', reason: 'unloaded' }]);
    await core.loadModel('simple', { configOverride: '{"max_batch_size":"16","dynamic_batching":{}}' });
    expect(core.isModelReady('simple', '1')).toBe(true);
    expect(core.versionStates('simple')).toEqual([{ version: '1', state: 'READY', reason: '' }]);
    expect(core.modelConfig('simple').max_batch_size).toBe(16);
    // A config asking for dynamic batching loads and is applied: the metadata needs no note about it.
    expect(core.modelMetadata('simple').properties).toBeUndefined();
    const batched = await core.infer({ modelName: 'simple', inputs: simpleInputs(2) });
    expect(Array.from(batched.outputs[0]?.data as Int32Array).slice(0, 3)).toEqual([1, 2, 3]);
    expect(await codeOf(core.loadModel('simple', { configOverride: '{not json' }))).toMatch(
      /^INVALID_ARGUMENT: Invalid config override/,
    );
    expect(await codeOf(core.loadModel('missing'))).toMatch(/^INTERNAL: failed to load 'missing'/);
    expect(changes).toEqual(['simple', 'simple']);
    expect(await core.repositoryIndex({ readyOnly: true })).toEqual(
      expect.arrayContaining([{ name: 'simple', version: '1', state: 'READY', reason: '' }]),
    );
  });
});
