import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateExampleRepository,
  IDENTITY_DATATYPES,
  type IdentityDatatype,
  identityModelName,
  scanModelRepository,
} from '@nvcf/models';
import type { Datatype, Tensor } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import { SessionCache } from '../runtime/session-cache.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);
const bytesOf = (v: ArrayBufferView) => [...new Uint8Array(v.buffer, v.byteOffset, v.byteLength)];

/** Six elements per datatype, including the values most likely to be mangled on the way through. */
const SAMPLES: Record<IdentityDatatype, Tensor['data']> = {
  BOOL: new Uint8Array([0, 1, 1, 0, 0, 1]),
  UINT8: new Uint8Array([0, 1, 127, 128, 254, 255]),
  UINT16: new Uint16Array([0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff]),
  UINT32: new Uint32Array([0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]),
  UINT64: new BigUint64Array([0n, 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]),
  INT8: new Int8Array([-128, -1, 0, 1, 126, 127]),
  INT16: new Int16Array([-32768, -1, 0, 1, 32766, 32767]),
  INT32: new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 2, 2 ** 31 - 1]),
  INT64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n]),
  // 1.0, -0.0, smallest subnormal, 65504 (max), +Inf, a NaN payload: raw bits must come back unchanged.
  FP16: new Uint16Array([0x3c00, 0x8000, 0x0001, 0x7bff, 0x7c00, 0x7e01]),
  FP32: new Float32Array([0, -0, 1.5, -3.25e-38, Number.POSITIVE_INFINITY, Number.NaN]),
  FP64: new Float64Array([0, -0, Math.PI, Number.MIN_VALUE, Number.MAX_VALUE, Number.NaN]),
  BYTES: ['', 'hello', 'héllo wörld', '日本語', '\uFEFFbom', '🙂'].map(utf8),
};

let dir: string;
let cache: SessionCache;
const models = new Map<string, LoadedModel>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-identity-'));
  await generateExampleRepository(dir, { includeIdentity: true });
  cache = new SessionCache({
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logger: { info() {}, warn() {} },
  });
  for (const entry of await scanModelRepository(dir)) models.set(entry.name, await cache.load(entry));
});

afterAll(async () => {
  await cache?.close();
  await rm(dir, { recursive: true, force: true });
});

const model = (dt: IdentityDatatype) => models.get(identityModelName(dt)) as LoadedModel;
const input = (datatype: Datatype, shape: number[], data: Tensor['data']): Tensor => ({
  name: 'INPUT0',
  datatype,
  shape,
  data,
});

describe('identity models', () => {
  it('exist for every datatype ONNX Runtime can carry, with both dimensions dynamic', () => {
    expect(IDENTITY_DATATYPES).toHaveLength(13);
    for (const dt of IDENTITY_DATATYPES) {
      expect(model(dt).inputs).toEqual([{ name: 'INPUT0', datatype: dt, shape: [-1, -1] }]);
      expect(model(dt).outputs).toEqual([{ name: 'OUTPUT0', datatype: dt, shape: [-1, -1] }]);
    }
  });

  it.each(IDENTITY_DATATYPES)('round-trips %s unchanged', async (dt) => {
    const [out] = await model(dt).run([input(dt, [2, 3], SAMPLES[dt])]);
    expect(out?.name).toBe('OUTPUT0');
    expect(out?.datatype).toBe(dt);
    expect(out?.shape).toEqual([2, 3]);
    expect(out?.data.constructor).toBe(SAMPLES[dt].constructor);
    // Compare bytes, not values: -0, NaN payloads and FP16 bit patterns must survive exactly.
    if (dt === 'BYTES')
      expect((out!.data as Uint8Array[]).map(bytesOf)).toEqual((SAMPLES.BYTES as Uint8Array[]).map(bytesOf));
    else expect(bytesOf(out?.data as ArrayBufferView)).toEqual(bytesOf(SAMPLES[dt] as ArrayBufferView));
  });

  it.each(IDENTITY_DATATYPES)('round-trips an empty %s tensor', async (dt) => {
    const empty = dt === 'BYTES' ? [] : new (SAMPLES[dt].constructor as Uint8ArrayConstructor)(0);
    const [out] = await model(dt).run([input(dt, [0, 3], empty)]);
    expect(out?.shape).toEqual([0, 3]);
    expect(out?.data).toHaveLength(0);
  });

  it('sends BOOL as 0/1 even when a caller uses other non-zero bytes', async () => {
    const [out] = await model('BOOL').run([input('BOOL', [1, 3], new Uint8Array([0, 2, 255]))]);
    expect([...(out!.data as Uint8Array)]).toEqual([0, 1, 1]);
  });

  it.each([
    ['a NUL byte', new Uint8Array([0x61, 0x00, 0x62]), 'contains a NUL byte'],
    ['invalid UTF-8', new Uint8Array([0xff, 0xfe]), 'is not valid UTF-8'],
  ])('rejects BYTES elements with %s rather than corrupt them', async (_, bad, message) => {
    const run = model('BYTES').run([input('BYTES', [1, 2], [utf8('ok'), bad])]);
    await expect(run).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(message) });
    await expect(run).rejects.toThrow("element 1 for model 'identity_bytes'");
  });
});
