import {
  type Client,
  credentials,
  makeGenericClientConstructor,
  type ServiceDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { tritonV1GrpcDefinition } from '@nvcf/inference-server';
import { invokeUnary, loadKserveClients } from '@nvcf/kserve-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_MODEL } from './function-model-fixture.ts';
import { type SurfacesFixture, startSurfacesFixture } from './surfaces-fixture.ts';

const KEY = 'x-nvcf-worker-key';
const SECRET = 's3cret-value';
const DISABLED = 'explicit model load / unload is not allowed if polling is enabled';

/** Each client's service definition, for calls by method name (invokeUnary). */
const serviceOf = new Map<Client, ServiceDefinition>();

// The worker's defaults: model control none, function models hidden. The second set of surfaces, over the same
// core, exposes function models and restricts the repository and config groups.
let fx: SurfacesFixture;
let plain: Client;
let guarded: Client;
let v1: Client;
beforeAll(async () => {
  fx = await startSurfacesFixture('grpc');
  const defaults = await fx.serve();
  const restricted = await fx.serve({
    WORKER_EXPOSE_FUNCTION_MODELS: 'true',
    WORKER_RESTRICTED_API: `model-repository,model-config:${KEY}=${SECRET}`,
  });
  const { GRPCInferenceService } = loadKserveClients();
  plain = new GRPCInferenceService(defaults.grpcAddress, credentials.createInsecure());
  guarded = new GRPCInferenceService(restricted.grpcAddress, credentials.createInsecure());
  const V1 = makeGenericClientConstructor(tritonV1GrpcDefinition(), 'GRPCService');
  v1 = new V1(defaults.grpcAddress, credentials.createInsecure());
  serviceOf.set(plain, GRPCInferenceService.service).set(guarded, GRPCInferenceService.service).set(v1, V1.service);
});
afterAll(async () => {
  for (const client of [plain, guarded, v1]) client?.close();
  await fx?.close();
});

const invoke = async <T>(client: Client, method: string, request: object, metadata: Record<string, string> = {}) => {
  const service = serviceOf.get(client);
  if (!service) throw new Error('a client this file did not make');
  // The tests name the answer's shape (proto-loader's plain object of that message).
  return (await invokeUnary(client, service, method, request, { metadata })).response as T;
};
const call = <T = Record<string, unknown>>(client: Client, method: string, request: object = {}, md = {}) =>
  invoke<T>(client, method, request, md);
async function fail(client: Client, method: string, request: object = {}, md = {}): Promise<ServiceError> {
  try {
    await invoke(client, method, request, md);
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error(`${method} succeeded but was expected to fail`);
}

const int32Bytes = (values: number[]) => Buffer.from(Int32Array.from(values).buffer);
const simple = (model: string) => ({
  model_name: model,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16] })),
  raw_input_contents: [int32Bytes(Array(16).fill(1)), int32Bytes(Array(16).fill(2))],
});
const granted = { [`triton-grpc-protocol-${KEY}`]: SECRET };

describe('model control mode none (the default)', () => {
  it('refuses RepositoryModelLoad/Unload UNAVAILABLE with Triton’s wording', async () => {
    for (const method of ['RepositoryModelUnload', 'RepositoryModelLoad']) {
      const err = await fail(plain, method, { model_name: 'simple' });
      expect([err.code, err.details], method).toEqual([status.UNAVAILABLE, DISABLED]);
    }
    expect(await call(plain, 'ModelReady', { name: 'simple' })).toEqual({ ready: true });
  });

  it('refuses v1 ModelControl with UNAVAILABLE in request_status', async () => {
    // The v1 definition decodes into protobufjs messages; toJSON names enums as the proto does.
    const res = await call<{ request_status: { toJSON(): unknown } }>(v1, 'ModelControl', {
      model_name: 'simple',
      type: 'UNLOAD',
    });
    expect(res.request_status.toJSON()).toMatchObject({ code: 'UNAVAILABLE', msg: DISABLED });
    expect(fx.core.isModelReady('simple')).toBe(true);
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
      const err = await fail(plain, method, req);
      expect([err.code, err.details], method).toEqual([status.INVALID_ARGUMENT, unknown]);
    }
    expect(await call(plain, 'ModelReady', { name: FUNCTION_MODEL })).toEqual({ ready: false });
    const index = await call<{ models: { name: string }[] }>(plain, 'RepositoryIndex', {});
    expect(index.models.map((m) => m.name)).toContain('simple');
    expect(index.models.map((m) => m.name)).not.toContain(FUNCTION_MODEL);
  });

  it('are served with WORKER_EXPOSE_FUNCTION_MODELS', async () => {
    const res = await call<{ model_name: string }>(guarded, 'ModelInfer', simple(FUNCTION_MODEL));
    expect(res.model_name).toBe(FUNCTION_MODEL);
    const index = await call<{ models: { name: string }[] }>(guarded, 'RepositoryIndex', {}, granted);
    expect(index.models.map((m) => m.name)).toContain(FUNCTION_MODEL);
  });
});

describe('restricted protocols in front of model control', () => {
  it('end UNAVAILABLE without the metadata, and with it still refuse unload (model control none)', async () => {
    const err = await fail(guarded, 'RepositoryModelUnload', { model_name: 'simple' });
    expect([err.code, err.details]).toEqual([
      status.UNAVAILABLE,
      `This protocol is restricted, expecting header 'triton-grpc-protocol-${KEY}'`,
    ]);
    const allowed = await fail(guarded, 'RepositoryModelUnload', { model_name: 'simple' }, granted);
    expect([allowed.code, allowed.details]).toEqual([status.UNAVAILABLE, DISABLED]);
    expect(fx.core.isModelReady('simple')).toBe(true);
  });
});
