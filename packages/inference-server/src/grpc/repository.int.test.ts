import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GrpcFixture, startGrpcFixture } from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  // A model that cannot load at startup keeps the server not ready (Triton: ready = every model ready).
  fx = await startGrpcFixture('repo', async (dir) => {
    await mkdir(join(dir, 'broken', '1'), { recursive: true });
    await writeFile(join(dir, 'broken', '1', 'model.onnx'), 'not an onnx model');
  });
});
afterAll(async () => {
  await fx?.close();
});

type Index = { models: { name: string; version: string; state: string; reason: string }[] };

describe('model repository RPCs', () => {
  it('a model that failed to load at startup: NOT_SERVING and not ready until it is unloaded', async () => {
    expect(await fx.check('')).toEqual({ status: 'NOT_SERVING' });
    expect(await fx.check('inference.GRPCInferenceService')).toEqual({ status: 'NOT_SERVING' });
    expect(await fx.call('ServerReady')).toEqual({ ready: false });
    const index = await fx.call<Index>('RepositoryIndex', {});
    const broken = index.models.find((m) => m.name === 'broken');
    expect(broken).toMatchObject({ version: '', state: 'UNAVAILABLE' });
    expect(broken?.reason.length).toBeGreaterThan(0);
    await fx.call('RepositoryModelUnload', { model_name: 'broken' });
    expect(await fx.check('')).toEqual({ status: 'SERVING' });
    expect(await fx.call('ServerReady')).toEqual({ ready: true });
  });

  it('RepositoryIndex lists every model with its version and state', async () => {
    const index = await fx.call<Index>('RepositoryIndex', {});
    expect(index.models).toEqual(
      expect.arrayContaining([
        { name: 'simple', version: '1', state: 'READY', reason: '' },
        { name: 'classifier', version: '1', state: 'READY', reason: '' },
        { name: 'identity_bytes', version: '1', state: 'READY', reason: '' },
      ]),
    );
  });

  it('unloads, shows the model unavailable, and loads it again', async () => {
    expect(
      await fx.call('RepositoryModelUnload', {
        model_name: 'simple',
        parameters: { unload_dependents: { bool_param: false } },
      }),
    ).toEqual({});
    expect(await fx.call('ModelReady', { name: 'simple' })).toEqual({ ready: false });
    const index = await fx.call<Index>('RepositoryIndex', {});
    expect(index.models.find((m) => m.name === 'simple')).toMatchObject({ state: 'UNAVAILABLE', version: '' });
    const readyOnly = await fx.call<Index>('RepositoryIndex', { ready: true });
    expect(readyOnly.models.map((m) => m.name)).not.toContain('simple');
    const err = await fx.fail('ModelInfer', { model_name: 'simple', inputs: [] });
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain('Request for unknown model');

    expect(await fx.call('RepositoryModelLoad', { model_name: 'simple' })).toEqual({});
    expect(await fx.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
  });

  it('loads with a config override given as a string_param (simple_grpc_model_control.py)', async () => {
    const current = await fx.call<{ config: Record<string, unknown> }>('ModelConfig', { name: 'simple' });
    expect(current.config.max_batch_size).toBe(8);
    const override = JSON.stringify({ ...current.config, max_batch_size: 16 });
    await fx.call('RepositoryModelLoad', {
      model_name: 'simple',
      parameters: { config: { string_param: override } },
    });
    const after = await fx.call<{ config: Record<string, unknown> }>('ModelConfig', { name: 'simple' });
    expect(after.config.max_batch_size).toBe(16);
  });

  it('refuses unknown load parameters and a config that is not a string', async () => {
    const unknown = await fx.fail('RepositoryModelLoad', {
      model_name: 'simple',
      parameters: { colour: { string_param: 'x' } },
    });
    expect(unknown.code).toBe(status.INVALID_ARGUMENT);
    expect(unknown.details).toContain("Unrecognized load parameter 'colour'");
    const notString = await fx.fail('RepositoryModelLoad', {
      model_name: 'simple',
      parameters: { config: { int64_param: 1 } },
    });
    expect(notString.code).toBe(status.INVALID_ARGUMENT);
    const file = await fx.fail('RepositoryModelLoad', {
      model_name: 'simple',
      parameters: { 'file:1/model.onnx': { bytes_param: Buffer.from([1]) } },
    });
    expect(file.code).toBe(status.UNIMPLEMENTED);
  });

  it('an unparsable config override → INVALID_ARGUMENT; loading a missing model → INTERNAL "failed to load"', async () => {
    const bad = await fx.fail('RepositoryModelLoad', {
      model_name: 'simple',
      parameters: { config: { string_param: '{not json' } },
    });
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toContain('Invalid config override');
    const missing = await fx.fail('RepositoryModelLoad', { model_name: 'absent' });
    expect(missing.code).toBe(status.INTERNAL);
    expect(missing.details).toMatch(/^failed to load 'absent'/);
    const index = await fx.call<Index>('RepositoryIndex', {});
    expect(index.models.map((m) => m.name)).not.toContain('absent');
  });
});
