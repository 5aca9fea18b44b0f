import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, credentials, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js';
import { invokeUnary } from '@nvcf/kserve-grpc';
import { generateExampleRepository } from '@nvcf/models';
import { pino } from 'pino';
import type protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceCore } from '../core/core-types.ts';
import { startInferenceCore } from '../core/create-core.ts';
import { type KserveGrpcServer, startKserveGrpcServer } from '../grpc/kserve-grpc-server.ts';
import { compactFromDecoded } from '../triton-v1/v1-codec.ts';
import type { InferResponseHeaderMsg, RequestStatusMsg, ServerStatusMsg } from '../triton-v1/v1-messages.ts';
import { tritonV1GrpcDefinition } from './v1-grpc-definition.ts';

let dir: string;
let core: InferenceCore;
let server: KserveGrpcServer;
let client: Client;
const V1_SERVICE = tritonV1GrpcDefinition();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'v1-grpc-'));
  await generateExampleRepository(dir);
  const logger = pino({ level: 'silent' });
  core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    logger,
  );
  // The KServe gRPC port: v1 is served there beside KServe V2.
  server = await startKserveGrpcServer(core, { host: '127.0.0.1', port: 0, logger });
  const port = server.port;
  const Client = makeGenericClientConstructor(V1_SERVICE, 'GRPCService');
  client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

type Decoded = protobuf.Message & Record<string, unknown>;
// The v1 service is served from protobufjs types: its answers are decoded protobufjs messages.
const call = async (method: string, request: object) =>
  (await invokeUnary(client, V1_SERVICE, method, request)).response as Decoded;
const statusOf = (res: Decoded) =>
  compactFromDecoded('RequestStatus', res.request_status as protobuf.Message) as RequestStatusMsg;

const int32s = (values: number[]) => Buffer.from(Int32Array.from(values).buffer);
// Copied first: the decoded bytes are Buffers, whose slice() is a view into a shared pool.
const int32sOf = (b: Uint8Array) => [...new Int32Array(Uint8Array.from(b).buffer)];
const simpleRequest = (extra: object = {}) => ({
  model_name: 'simple',
  model_version: -1,
  meta_data: {
    batch_size: 1,
    input: [{ name: 'INPUT0' }, { name: 'INPUT1' }],
    output: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
  },
  raw_input: [int32s(Array.from({ length: 16 }, (_, i) => i)), int32s(Array(16).fill(1))],
  ...extra,
});

describe('v1 gRPC GRPCService', () => {
  it('V15 Infer with meta_data as in V07 and two raw_input entries: SUCCESS and two 64-byte raw_output entries', async () => {
    const res = await call('Infer', simpleRequest());
    expect(statusOf(res)).toMatchObject({ code: 'SUCCESS', server_id: 'inference:0' });
    const outputs = res.raw_output as Uint8Array[];
    expect(outputs.map((o) => o.byteLength)).toEqual([64, 64]);
    expect(int32sOf(outputs[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(int32sOf(outputs[1]!)).toEqual(Array.from({ length: 16 }, (_, i) => i - 1));
    const header = compactFromDecoded(
      'InferResponseHeader',
      res.meta_data as protobuf.Message,
    ) as unknown as InferResponseHeaderMsg;
    expect(header).toMatchObject({ model_name: 'simple', model_version: 1, batch_size: 1 });
    expect(header.output.map((o) => o.raw)).toEqual([
      { dims: [16], batch_byte_size: 64 },
      { dims: [16], batch_byte_size: 64 },
    ]);
  });

  it('reports failures in request_status with an OK gRPC status', async () => {
    const bad = await call('Infer', simpleRequest({ raw_input: [int32s([1, 2])] }));
    expect(statusOf(bad)).toMatchObject({
      code: 'INVALID_ARG',
      msg: 'expected 2 raw_input entries (one per meta_data input), got 1',
    });
    expect((bad.raw_output as unknown[]).length).toBe(0);
    const unknown = await call('Infer', simpleRequest({ model_name: 'nope' }));
    expect(statusOf(unknown).code).toBe('UNAVAILABLE');
    const shm = await call('SharedMemoryControl', {});
    expect(statusOf(shm).code).toBe('UNSUPPORTED');
  });

  it('Status and Health answer as the HTTP endpoints do', async () => {
    const status = await call('Status', { model_name: 'simple' });
    expect(statusOf(status).code).toBe('SUCCESS');
    const server = compactFromDecoded(
      'ServerStatus',
      status.server_status as protobuf.Message,
    ) as unknown as ServerStatusMsg;
    expect(server.model_status.simple?.version_status?.['1']?.ready_state).toBe('MODEL_READY');
    expect(server.model_status.simple?.config).toMatchObject({ max_batch_size: 8 });
    expect(statusOf(await call('Status', { model_name: 'foo' })).code).toBe('NOT_FOUND');
    for (const mode of ['live', 'ready']) {
      const health = await call('Health', { mode });
      expect([statusOf(health).code, health.health]).toEqual(['SUCCESS', true]);
    }
  });

  it('StreamInfer answers every request in order', async () => {
    const method = V1_SERVICE.StreamInfer;
    if (!method) throw new Error('the v1 service has no StreamInfer');
    const stream = client.makeBidiStreamRequest<object, Decoded>(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      new Metadata(),
    );
    const answers: Decoded[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (d: Decoded) => answers.push(d));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    for (let k = 0; k < 4; k++) {
      stream.write(simpleRequest({ raw_input: [int32s(Array(16).fill(k)), int32s(Array(16).fill(1))] }));
    }
    stream.write(simpleRequest({ model_name: 'nope' }));
    stream.end();
    await done;
    expect(answers.slice(0, 4).map((a) => int32sOf((a.raw_output as Uint8Array[])[0]!)[0])).toEqual([1, 2, 3, 4]);
    expect(statusOf(answers[4]!).code).toBe('UNAVAILABLE');
  });

  it('ModelControl unloads and loads', async () => {
    expect(statusOf(await call('ModelControl', { model_name: 'classifier', type: 'UNLOAD' })).code).toBe('SUCCESS');
    expect(core.isModelReady('classifier')).toBe(false);
    expect(statusOf(await call('ModelControl', { model_name: 'classifier', type: 'LOAD' })).code).toBe('SUCCESS');
    expect(core.isModelReady('classifier')).toBe(true);
  });
});
