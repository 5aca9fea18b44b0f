import { type Client, credentials, Metadata, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFunctionModel, FUNCTION_MODEL } from '../access/function-model-fixture.ts';
import { parseRestrictedApis } from '../access/restricted-apis.ts';
import { tritonV1GrpcDefinition } from '../grpc-v1/v1-grpc-definition.ts';
import { compactFromDecoded } from '../triton-v1/v1-codec.ts';
import type { RequestStatusMsg } from '../triton-v1/v1-messages.ts';
import { type GrpcFixture, int32Bytes, startGrpcFixture } from './grpc-test-fixture.ts';

const KEY = 'x-nvcf-worker-key';
const SECRET = 's3cret-value';
const DISABLED = 'explicit model load / unload is not allowed if polling is enabled';

// Defaults: model control none, function models hidden, 64 MiB receive limit. The second server restricts
// the repository and config groups, exposes function models and takes at most 64 KiB per message.
let plain: GrpcFixture;
let guarded: GrpcFixture;
let v1: Client;
beforeAll(async () => {
  plain = await startGrpcFixture('policy', addFunctionModel);
  guarded = await startGrpcFixture('guarded', addFunctionModel, {
    exposeFunctionModels: true,
    maxReceiveBytes: 64 * 1024,
    restrictedApis: parseRestrictedApis(`model-repository,model-config:${KEY}=${SECRET}`),
  });
  const V1 = makeGenericClientConstructor(tritonV1GrpcDefinition(), 'GRPCService');
  v1 = new V1(plain.address, credentials.createInsecure());
});
afterAll(async () => {
  v1?.close();
  await plain?.close();
  await guarded?.close();
});

const simple = (model: string, rows = 1) => ({
  model_name: model,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [rows, 16] })),
  raw_input_contents: [int32Bytes(Array(16 * rows).fill(1)), int32Bytes(Array(16 * rows).fill(2))],
});
const granted = { metadata: { [`triton-grpc-protocol-${KEY}`]: SECRET } };

describe('model control mode none (the default)', () => {
  it('refuses RepositoryModelLoad/Unload UNAVAILABLE with Triton’s wording', async () => {
    for (const method of ['RepositoryModelUnload', 'RepositoryModelLoad']) {
      const err = await plain.fail(method, { model_name: 'simple' });
      expect([err.code, err.details], method).toEqual([status.UNAVAILABLE, DISABLED]);
    }
    expect(await plain.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
  });

  it('refuses v1 ModelControl with UNAVAILABLE in request_status', async () => {
    const res = await new Promise<protobuf.Message & { request_status: protobuf.Message }>((resolve, reject) =>
      (
        v1 as unknown as Record<string, (r: object, cb: (e: Error | null, r: never) => void) => void>
      ).ModelControl?.call(v1, { model_name: 'simple', type: 'UNLOAD' }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    const rs = compactFromDecoded('RequestStatus', res.request_status) as RequestStatusMsg;
    expect(rs).toMatchObject({ code: 'UNAVAILABLE', msg: DISABLED });
    expect(plain.core.isModelReady('simple')).toBe(true);
  });
});

describe('NVCF function models', () => {
  it('are unknown on gRPC while hidden', async () => {
    const unknown = `Request for unknown model: '${FUNCTION_MODEL}' is not found`;
    for (const [method, req] of [
      ['ModelInfer', simple(FUNCTION_MODEL)],
      ['ModelMetadata', { name: FUNCTION_MODEL }],
      ['ModelConfig', { name: FUNCTION_MODEL }],
      ['ModelStatistics', { name: FUNCTION_MODEL }],
    ] as const) {
      const err = await plain.fail(method, req);
      expect([err.code, err.details], method).toEqual([status.INVALID_ARGUMENT, unknown]);
    }
    expect(await plain.call('ModelReady', { name: FUNCTION_MODEL })).toEqual({ ready: false });
    const index = await plain.call<{ models: { name: string }[] }>('RepositoryIndex', {});
    expect(index.models.map((m) => m.name)).toContain('simple');
    expect(index.models.map((m) => m.name)).not.toContain(FUNCTION_MODEL);
  });

  it('are served with exposeFunctionModels', async () => {
    const res = await guarded.call<{ model_name: string }>('ModelInfer', simple(FUNCTION_MODEL));
    expect(res.model_name).toBe(FUNCTION_MODEL);
  });
});

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
  });

  it('let the metadata through, and leave other groups open', async () => {
    const index = await guarded.call<{ models: { name: string }[] }>('RepositoryIndex', {}, granted);
    expect(index.models.map((m) => m.name)).toContain(FUNCTION_MODEL);
    expect(await guarded.call('ModelConfig', { name: 'simple' }, granted)).toHaveProperty('config');
    expect(await guarded.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
    expect(await guarded.call('ModelMetadata', { name: 'simple' })).toMatchObject({ name: 'simple' });
    // Past the restriction, model control is still `none`.
    const err = await guarded.fail('RepositoryModelUnload', { model_name: 'simple' }, granted);
    expect([err.code, err.details]).toEqual([status.UNAVAILABLE, DISABLED]);
  });

  it('applies to the v1 service on the same port', async () => {
    const V1 = makeGenericClientConstructor(tritonV1GrpcDefinition(), 'GRPCService');
    const client = new V1(guarded.address, credentials.createInsecure());
    try {
      const err = await new Promise<{ code: number; details: string }>((resolve, reject) =>
        (client as unknown as Record<string, (r: object, m: Metadata, cb: (e: never) => void) => void>).Status?.call(
          client,
          {},
          new Metadata(),
          (e) => (e ? resolve(e) : reject(new Error('Status succeeded'))),
        ),
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
