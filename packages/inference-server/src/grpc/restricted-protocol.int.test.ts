import { credentials, makeGenericClientConstructor, type ServiceError, status } from '@grpc/grpc-js';
import { invokeUnary } from '@nvcf/kserve-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRestrictedApis } from '../access/restricted-apis.ts';
import { tritonV1GrpcDefinition } from '../grpc-v1/v1-grpc-definition.ts';
import { type GrpcFixture, int32Bytes, startGrpcFixture } from './grpc-test-fixture.ts';

const KEY = 'x-admin-key';
const SECRET = 's3cret-value';

// The first server has the defaults (nothing restricted, 64 MiB receive limit); the second restricts the
// repository and config groups (Triton's --grpc-restricted-protocol) and takes at most 64 KiB per message.
let plain: GrpcFixture;
let guarded: GrpcFixture;
beforeAll(async () => {
  plain = await startGrpcFixture('plain');
  guarded = await startGrpcFixture('guarded', undefined, {
    maxReceiveBytes: 64 * 1024,
    restrictedApis: parseRestrictedApis(`model-repository,model-config:${KEY}=${SECRET}`),
  });
});
afterAll(async () => {
  await plain?.close();
  await guarded?.close();
});

const simple = (model: string, rows = 1) => ({
  model_name: model,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [rows, 16] })),
  raw_input_contents: [int32Bytes(Array(16 * rows).fill(1)), int32Bytes(Array(16 * rows).fill(2))],
});
const granted = { metadata: { [`triton-grpc-protocol-${KEY}`]: SECRET } };

describe('restricted protocols', () => {
  it('end UNAVAILABLE with Triton’s wording without triton-grpc-protocol-<key>, or with a wrong value', async () => {
    const message = `This protocol is restricted, expecting header 'triton-grpc-protocol-${KEY}'`;
    const attempts: Record<string, string>[] = [{}, { [KEY]: SECRET }, { [`triton-grpc-protocol-${KEY}`]: 'wrong' }];
    for (const metadata of attempts) {
      for (const [method, req] of [
        ['RepositoryIndex', {}],
        ['RepositoryModelUnload', { model_name: 'simple' }],
        ['ModelConfig', { name: 'simple' }],
      ] as const) {
        const err = await guarded.fail(method, req, { metadata });
        expect([err.code, err.details], method).toEqual([status.UNAVAILABLE, message]);
      }
    }
    expect(guarded.core.isModelReady('simple')).toBe(true);
  });

  it('let the metadata through, and leave other groups open', async () => {
    const index = await guarded.call<{ models: { name: string }[] }>('RepositoryIndex', {}, granted);
    expect(index.models.map((m) => m.name)).toContain('simple');
    expect(await guarded.call('ModelConfig', { name: 'simple' }, granted)).toHaveProperty('config');
    expect(await guarded.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
    expect(await guarded.call('ModelMetadata', { name: 'simple' })).toMatchObject({ name: 'simple' });
    // Past the restriction, repository control reaches the core: this reloads the model.
    expect(await guarded.call('RepositoryModelLoad', { model_name: 'simple' }, granted)).toEqual({});
    expect(await guarded.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
  });

  it('applies to the v1 service on the same port', async () => {
    const V1 = makeGenericClientConstructor(tritonV1GrpcDefinition(), 'GRPCService');
    const client = new V1(guarded.address, credentials.createInsecure());
    try {
      const err = await invokeUnary(client, V1.service, 'Status', {}).then(
        () => {
          throw new Error('Status succeeded');
        },
        (e: ServiceError) => e,
      );
      expect(err.code).toBe(status.UNAVAILABLE);
      expect(err.details).toMatch(/^This protocol is restricted/);
    } finally {
      client.close();
    }
  });
});

describe('receive limit', () => {
  it('refuses a message over maxReceiveBytes with RESOURCE_EXHAUSTED, and takes one under it', async () => {
    // 512 rows × 16 INT32 × 2 inputs = 64 KiB of tensor data, plus framing: over the 64 KiB limit.
    const err = await guarded.fail('ModelInfer', simple('simple', 512));
    expect(err.code).toBe(status.RESOURCE_EXHAUSTED);
    expect((await guarded.call<{ model_name: string }>('ModelInfer', simple('simple', 8))).model_name).toBe('simple');
    // Under the default (64 MiB) the same message is read and reaches the model, which refuses its batch size.
    const read = await plain.fail('ModelInfer', simple('simple', 512));
    expect([read.code, read.details]).toEqual([
      status.INVALID_ARGUMENT,
      "inference request batch-size must be <= 8 for 'simple'",
    ]);
  });
});
