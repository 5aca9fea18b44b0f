import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { assetObjectKey } from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';
import { createLocalDirStore, type ObjectStore } from '@nvcf/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindAssetInputs } from './asset-inputs.ts';

const ID = '0b9f2d5e-58a4-4c1e-9a59-3f0f7e0d1a11';
const referenced = new Set([ID]);

let dir: string;
let real: ObjectStore;
/** Bytes the code under test pulled out of object bodies, and bodies it left open. */
let pulled: number;
let bodies: Readable[];

/**
 * The local store behind a seam that counts what is read from each body (the generator runs only when
 * the body is read, so an unread body counts 0).
 */
const counting = (): ObjectStore => ({
  ...real,
  async get(key) {
    const object = await real.get(key);
    if (!object) return undefined;
    const inner = object.body;
    const body = Readable.from(
      (async function* () {
        for await (const chunk of inner) {
          pulled += (chunk as Buffer).length;
          yield chunk;
        }
      })(),
    );
    body.on('close', () => inner.destroy());
    bodies.push(body);
    return { ...object, body };
  },
});

const putAsset = (bytes: Buffer) => real.put(assetObjectKey(ID), bytes, { contentType: 'application/octet-stream' });
const request = (input: Record<string, unknown>) => ({
  inputs: [{ name: 'INPUT', parameters: { nvcf_asset_id: ID }, ...input }],
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-asset-inputs-'));
  real = createLocalDirStore(dir);
  pulled = 0;
  bodies = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('asset-borne input tensors', () => {
  it('reads an asset whose size matches the shape into the binary form', async () => {
    const data = Buffer.from(Float32Array.from([1, 2, 3, 4]).buffer);
    await putAsset(data);
    const bound = await bindAssetInputs(request({ datatype: 'FP32', shape: [1, 4] }), referenced, counting());
    expect(bound).toBeDefined();
    const header = JSON.parse(bound?.body.subarray(0, bound.headerLength).toString() ?? '');
    expect(header.inputs[0]).toEqual({
      name: 'INPUT',
      datatype: 'FP32',
      shape: [1, 4],
      parameters: { binary_data_size: 16 },
    });
    expect(bound?.body.subarray(bound.headerLength)).toEqual(data);
    expect(pulled).toBe(16);
  });

  it('refuses an asset whose size does not match the shape before reading a byte', async () => {
    await putAsset(Buffer.alloc(20));
    const err = await bindAssetInputs(request({ datatype: 'FP32', shape: [1, 4] }), referenced, counting()).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: `input 'INPUT': asset ${ID} holds 20 bytes, but shape [1,4] of FP32 takes 16 bytes`,
    });
    expect(pulled).toBe(0);
    expect(bodies.every((b) => b.destroyed)).toBe(true);
  });

  it('needs a datatype and a valid shape to know the size, checked before the store is asked', async () => {
    await putAsset(Buffer.alloc(16));
    await expect(bindAssetInputs(request({ shape: [4] }), referenced, counting())).rejects.toThrow(
      /input 'INPUT': an input read from an asset needs a valid 'datatype'/,
    );
    await expect(bindAssetInputs(request({ datatype: 'FP32', shape: 'x' }), referenced, counting())).rejects.toThrow(
      /needs a 'shape' of integers/,
    );
    await expect(
      bindAssetInputs(request({ datatype: 'FP32', shape: [-1, 4] }), referenced, counting()),
    ).rejects.toThrow(/invalid shape \[-1,4\]/);
    await expect(
      bindAssetInputs(request({ datatype: 'FP32', shape: [1024, 1024] }), referenced, counting(), {
        maxElements: 1000,
      }),
    ).rejects.toThrow(/too many elements/);
    expect(bodies).toEqual([]);
  });

  it('BYTES: at least a length prefix per element', async () => {
    await putAsset(Buffer.alloc(7));
    await expect(bindAssetInputs(request({ datatype: 'BYTES', shape: [2] }), referenced, counting())).rejects.toThrow(
      /holds 7 bytes, but shape \[2\] of BYTES takes at least 8 bytes/,
    );
    expect(pulled).toBe(0);
    const prefixed = Buffer.from([2, 0, 0, 0, 104, 105, 0, 0, 0, 0]);
    await putAsset(prefixed);
    const bound = await bindAssetInputs(request({ datatype: 'BYTES', shape: [2] }), referenced, counting());
    expect(bound?.body.subarray(bound.headerLength)).toEqual(prefixed);
  });

  it('an unreferenced or missing asset is refused as before', async () => {
    await expect(
      bindAssetInputs(request({ datatype: 'FP32', shape: [1] }), new Set<string>(), counting()),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(
      bindAssetInputs(request({ datatype: 'FP32', shape: [1] }), referenced, counting()),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', message: `NotFound error: failed to find asset ${ID}` });
    expect(await bindAssetInputs({ inputs: [{ name: 'A', data: [1] }] }, referenced, counting())).toBeUndefined();
  });
});
