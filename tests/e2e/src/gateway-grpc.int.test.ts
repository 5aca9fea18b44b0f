import { status } from '@grpc/grpc-js';
import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { loadKserveProtos, type ModelInferResponseMsg } from '@nvcf/kserve-grpc';
import { createKeys, MODEL_INFER_RESPONSE_TYPE } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayGrpcFixture,
  type GrpcClient,
  int32Bytes,
  int32sOf,
  parseBytesElements,
  startGatewayGrpcFixture,
} from './grpc-test-fixture.ts';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness, verId } from './harness.ts';

let h: Harness;
let fx: GatewayGrpcFixture;
let grpc: GrpcClient;
let worker: RunningWorker;
let http: RunningGateway;
let keys: { listOnly: string; classifierOnly: string; rateLimited: string };

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  fx = await startGatewayGrpcFixture(h);
  http = fx.gateway;
  grpc = fx.client;
  const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
  keys = {
    listOnly: (await store.create({ name: 'list', scopes: ['list_functions'] })).key,
    // Its own credential: the limit counts per credential across gateways, and the admin key has been busy.
    rateLimited: (await store.create({ name: 'limited', scopes: ['invoke_function'] })).key,
    classifierOnly: (
      await store.create({ name: 'cls', scopes: ['invoke_function'], allowedFunctionIds: [fnId('classifier')] })
    ).key,
  };
});
afterAll(async () => {
  fx?.close();
  await h?.close();
});

const meta = (model = 'simple', extra: Record<string, string> = {}) => ({
  'function-id': fnId(model),
  authorization: `Bearer ${ADMIN_KEY}`,
  ...extra,
});

const INPUT0 = Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Array.from({ length: 16 }, (_, i) => 2 * i + 1);

/** Triton's simple_grpc_infer_client request: raw INT32 inputs, both outputs asked for. */
const rawSimple = (extra: object = {}) => ({
  model_name: 'simple',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
  ],
  outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
  raw_input_contents: [int32Bytes(INPUT0), int32Bytes(INPUT1)],
  ...extra,
});

const expectSimpleAnswer = (res: ModelInferResponseMsg) => {
  expect(res.model_name).toBe('simple');
  expect(res.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
    ['OUTPUT0', 'INT32', ['1', '16']],
    ['OUTPUT1', 'INT32', ['1', '16']],
  ]);
  expect(res.raw_output_contents).toHaveLength(2);
  expect(int32sOf(res.raw_output_contents[0]!)).toEqual(INPUT0.map((v, i) => v + INPUT1[i]!));
  expect(int32sOf(res.raw_output_contents[1]!)).toEqual(INPUT0.map((v, i) => v - INPUT1[i]!));
};

describe('ModelInfer through the queue', () => {
  it('raw inputs: sums and differences in raw_output_contents, nvcf-reqid in the initial metadata', async () => {
    const { response, metadata } = await grpc.call<ModelInferResponseMsg>('ModelInfer', rawSimple({ id: 'r1' }), {
      metadata: meta(),
    });
    expectSimpleAnswer(response);
    expect(response.id).toBe('r1');
    expect(metadata.get('nvcf-reqid')[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('typed contents (int_contents) and no outputs named: every output', async () => {
    const { response } = await grpc.call<ModelInferResponseMsg>(
      'ModelInfer',
      {
        model_name: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { int_contents: INPUT0 } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], contents: { int_contents: INPUT1 } },
        ],
      },
      { metadata: meta() },
    );
    expectSimpleAnswer(response);
  });

  it('pinned with function-version-id', async () => {
    const { response } = await grpc.call<ModelInferResponseMsg>('ModelInfer', rawSimple(), {
      metadata: meta('simple', { 'function-version-id': verId('simple') }),
    });
    expectSimpleAnswer(response);
  });

  it("tensors up to JOB_INLINE_INPUT_BYTES ride in the job's queue entry, larger ones wait beside it", async () => {
    // A second gateway whose limit (64 bytes) is under the request's 128 bytes of tensors.
    const { client: strict } = await fx.startServer({ JOB_INLINE_INPUT_BYTES: '64' });
    const monitor = await new Redis(h.redisUrl).monitor();
    const commands: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(args.map(String)));
    const small = await grpc.call<ModelInferResponseMsg>('ModelInfer', rawSimple(), { metadata: meta() });
    const large = await strict.call<ModelInferResponseMsg>('ModelInfer', rawSimple(), { metadata: meta() });
    expectSimpleAnswer(small.response);
    expectSimpleAnswer(large.response);
    const keys = createKeys(h.keyPrefix);
    const smallId = String(small.metadata.get('nvcf-reqid')[0]);
    const largeId = String(large.metadata.get('nvcf-reqid')[0]);
    // MONITOR's copy of a command can reach this client after the answer did: wait for both completions' last step
    // (the PUBLISH to `completions`), which follows the DEL of a kept input in the same script.
    const completed = (id: string) =>
      commands.some((c) => c[0]?.toLowerCase() === 'publish' && c[1]?.endsWith(':completions') && c[2] === id);
    await expect.poll(() => completed(smallId) && completed(largeId), { timeout: 10_000 }).toBe(true);
    monitor.disconnect();
    /** Commands on the request's input key (the scripts' own commands, not the FCALLs that name it). */
    const touching = (id: string) =>
      commands.filter((c) => c[1] === keys.requestInput(id) && c[0]?.toLowerCase() !== 'fcall');
    const queued = (id: string) => commands.find((c) => c[0]?.toLowerCase() === 'xadd' && c.includes(id)) ?? [];
    // In the entry, raw (field b: 128 bytes, not base64), and no input key written, read or dropped.
    expect(queued(smallId)).toContain('b');
    expect(commands.filter((c) => c.includes(keys.requestInput(smallId)))).toEqual([]);
    // Beside: written with the job, read by the worker, dropped with the answer.
    expect(queued(largeId)).not.toContain('b');
    expect(touching(largeId).map((c) => c[0]?.toLowerCase())).toEqual(['set', 'get', 'del']);
  });

  it('100 ModelInfer calls in a row on one channel all succeed (the seed client)', async () => {
    const started = performance.now();
    const ids = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const { response, metadata } = await grpc.call<ModelInferResponseMsg>('ModelInfer', rawSimple(), {
        metadata: meta(),
      });
      expectSimpleAnswer(response);
      ids.add(String(metadata.get('nvcf-reqid')[0]));
    }
    const ms = performance.now() - started;
    expect(ids.size).toBe(100);
    console.info(
      `100 sequential gRPC ModelInfer calls through the queue: ${ms.toFixed(0)} ms (${(ms / 100).toFixed(2)} ms each)`,
    );
  });

  it('classification on classifier: the top 3 classes as BYTES "<value>:<index>:<label>"', async () => {
    const input = new Float32Array(784).map((_, i) => (i % 7) / 7);
    const request = (outputs: object[]) => ({
      model_name: 'classifier',
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784] }],
      outputs,
      raw_input_contents: [Buffer.from(input.buffer)],
    });
    const plain = await grpc.call<ModelInferResponseMsg>('ModelInfer', request([{ name: 'PROBABILITIES' }]), {
      metadata: meta('classifier'),
    });
    const raw = plain.response.raw_output_contents[0]!;
    const probs = [...new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];
    const best = probs.indexOf(Math.max(...probs));

    const { response } = await grpc.call<ModelInferResponseMsg>(
      'ModelInfer',
      request([{ name: 'PROBABILITIES', parameters: { classification: { int64_param: 3 } } }]),
      { metadata: meta('classifier') },
    );
    expect(response.outputs[0]).toMatchObject({ name: 'PROBABILITIES', datatype: 'BYTES', shape: ['1', '3'] });
    const classes = parseBytesElements(response.raw_output_contents[0]!);
    expect(classes).toHaveLength(3);
    expect(classes[0]).toMatch(new RegExp(`^${probs[best]!.toFixed(6)}:${best}:`));
  });
});

describe('metadata and health RPCs, addressed by function-id', () => {
  it('ServerLive, ServerReady, ServerMetadata', async () => {
    expect((await grpc.call('ServerLive', {}, { metadata: meta() })).response).toEqual({ live: true });
    expect((await grpc.call('ServerReady', {}, { metadata: meta() })).response).toEqual({ ready: true });
    const { response } = await grpc.call<{ name: string; extensions: string[] }>(
      'ServerMetadata',
      {},
      { metadata: meta() },
    );
    expect(response.name).toBe('triton');
    expect(response.extensions).toContain('classification');
  });

  it("ModelMetadata: the function's model", async () => {
    const { response } = await grpc.call('ModelMetadata', { name: 'simple', version: '' }, { metadata: meta() });
    expect(response).toMatchObject({
      name: 'simple',
      versions: ['1'],
      inputs: [
        { name: 'INPUT0', datatype: 'INT32' },
        { name: 'INPUT1', datatype: 'INT32' },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32' },
        { name: 'OUTPUT1', datatype: 'INT32' },
      ],
    });
    const other = await grpc.fail('ModelMetadata', { name: 'resnet', version: '' }, { metadata: meta() });
    expect(other.error.code).toBe(status.INVALID_ARGUMENT);
    expect(other.error.details).toContain("Request for unknown model: 'resnet'");
  });

  it('ModelReady: true for the function model (by name, or unnamed), false for another model or version', async () => {
    const ready = async (name: string, version = '') =>
      (await grpc.call<{ ready: boolean }>('ModelReady', { name, version }, { metadata: meta() })).response.ready;
    expect(await ready('simple')).toBe(true);
    expect(await ready('simple', '1')).toBe(true);
    expect(await ready('')).toBe(true);
    expect(await ready('classifier')).toBe(false);
    expect(await ready('simple', '2')).toBe(false);
  });

  it('grpc.health.v1 Check answers SERVING without a credential', async () => {
    expect(await grpc.check('')).toEqual({ status: 'SERVING' });
    expect(await grpc.check('inference.GRPCInferenceService')).toEqual({ status: 'SERVING' });
    const { error } = await grpc
      .check('nope')
      .then(() => ({ error: undefined }))
      .catch((error: { code: number }) => ({ error }));
    expect(error?.code).toBe(status.NOT_FOUND);
  });

  it('RPCs the gateway does not offer are UNIMPLEMENTED', async () => {
    const { error } = await grpc.fail('ModelConfig', { name: 'simple' }, { metadata: meta() });
    expect(error.code).toBe(status.UNIMPLEMENTED);
    const method = loadKserveProtos().inference.ModelStreamInfer;
    if (!method) throw new Error('the inference service has no ModelStreamInfer');
    const { Metadata } = await import('@grpc/grpc-js');
    const md = new Metadata();
    for (const [k, v] of Object.entries(meta())) md.set(k, v);
    const call = grpc.inference.makeBidiStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      md,
    );
    const code = await new Promise<number>((resolve) => {
      call.on('error', (err: { code: number }) => resolve(err.code));
      call.on('data', () => {});
    });
    expect(code).toBe(status.UNIMPLEMENTED);
  });
});

describe('errors map to gRPC codes', () => {
  const expectStillServing = async () => {
    const { response } = await grpc.call<ModelInferResponseMsg>('ModelInfer', rawSimple(), { metadata: meta() });
    expectSimpleAnswer(response);
  };

  it('no authorization → UNAUTHENTICATED; a wrong key → UNAUTHENTICATED', async () => {
    const none = await grpc.fail('ModelInfer', rawSimple(), { metadata: { 'function-id': fnId('simple') } });
    expect(none.error.code).toBe(status.UNAUTHENTICATED);
    const wrong = await grpc.fail('ModelInfer', rawSimple(), {
      metadata: meta('simple', { authorization: 'Bearer nvapi-not-a-key' }),
    });
    expect(wrong.error.code).toBe(status.UNAUTHENTICATED);
    const health = await grpc.fail('ServerLive', {}, { metadata: { 'function-id': fnId('simple') } });
    expect(health.error.code).toBe(status.UNAUTHENTICATED);
  });

  it('a key without invoke_function → PERMISSION_DENIED; a key for another function → PERMISSION_DENIED', async () => {
    const noScope = await grpc.fail('ModelInfer', rawSimple(), {
      metadata: meta('simple', { authorization: `Bearer ${keys.listOnly}` }),
    });
    expect(noScope.error.code).toBe(status.PERMISSION_DENIED);
    expect(noScope.error.details).toContain('invoke_function');
    const otherFn = await grpc.fail('ModelInfer', rawSimple(), {
      metadata: meta('simple', { authorization: `Bearer ${keys.classifierOnly}` }),
    });
    expect(otherFn.error.code).toBe(status.PERMISSION_DENIED);
  });

  it('missing or malformed function-id → INVALID_ARGUMENT', async () => {
    const missing = await grpc.fail('ModelInfer', rawSimple(), { metadata: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(missing.error.code).toBe(status.INVALID_ARGUMENT);
    expect(missing.error.details).toContain('function-id');
    const bad = await grpc.fail('ModelInfer', rawSimple(), { metadata: meta('simple', { 'function-id': '../etc' }) });
    expect(bad.error.code).toBe(status.INVALID_ARGUMENT);
  });

  it('unknown function or version → NOT_FOUND', async () => {
    const unknown = { 'function-id': '00000000-0000-4000-8000-000000000000' };
    expect((await grpc.fail('ModelInfer', rawSimple(), { metadata: meta('simple', unknown) })).error.code).toBe(
      status.NOT_FOUND,
    );
    expect((await grpc.fail('ServerReady', {}, { metadata: meta('simple', unknown) })).error.code).toBe(
      status.NOT_FOUND,
    );
    const version = { 'function-version-id': '00000000-0000-4000-8000-000000000000' };
    expect((await grpc.fail('ModelInfer', rawSimple(), { metadata: meta('simple', version) })).error.code).toBe(
      status.NOT_FOUND,
    );
  });

  it.each([
    [
      'raw contents of the wrong size (refused by the gateway)',
      rawSimple({ raw_input_contents: [int32Bytes(INPUT0).subarray(4), int32Bytes(INPUT1)] }),
      "input 'INPUT0'",
    ],
    [
      'raw and typed contents mixed',
      rawSimple({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { int_contents: INPUT0 } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
        ],
      }),
      'contents field must not be specified',
    ],
    [
      'a shape the model does not take (refused by the worker)',
      rawSimple({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 8] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 8] },
        ],
        raw_input_contents: [int32Bytes(INPUT0.slice(0, 8)), int32Bytes(INPUT1.slice(0, 8))],
      }),
      'INPUT0',
    ],
    ['another model than the function serves', rawSimple({ model_name: 'classifier' }), 'Request for unknown model'],
  ])('%s → INVALID_ARGUMENT, and the port keeps serving', async (_, request, expected) => {
    const { error } = await grpc.fail('ModelInfer', request, { metadata: meta() });
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toContain(expected);
    await expectStillServing();
  });
});

describe('back-pressure', () => {
  it("over the credential's rate limit → RESOURCE_EXHAUSTED with retry-after in the trailers", async () => {
    // A gateway allowing one invocation per minute: the second is refused until the window ends.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 57_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
    const { client } = await fx.startServer({ RATE_LIMIT_PER_MINUTE: '1' });
    const limited = meta('simple', { authorization: `Bearer ${keys.rateLimited}` });
    await client.call('ModelInfer', rawSimple(), { metadata: limited });
    const { error } = await client.fail('ModelInfer', rawSimple(), { metadata: limited });
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    const after = Number(error.metadata.get('retry-after')[0]);
    expect(after).toBeGreaterThanOrEqual(1);
    expect(after).toBeLessThanOrEqual(61);
    // The metadata RPCs are not counted.
    expect((await client.call('ServerReady', {}, { metadata: limited })).response).toEqual({ ready: true });
  });
});

// Last: the worker goes away.
describe('deadlines (no worker left)', () => {
  it('a deadline shorter than the work → DEADLINE_EXCEEDED', async () => {
    await worker.close();
    const started = Date.now();
    const { error } = await grpc.fail('ModelInfer', rawSimple(), { metadata: meta(), deadlineMs: 1000 });
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('without a deadline, the wait ends at the default window: DEADLINE_EXCEEDED, the result fetchable over HTTP later', async () => {
    const { client } = await fx.startServer({ DEFAULT_POLL_SECONDS: '1' });
    const { error, metadata } = await client.fail('ModelInfer', rawSimple({ id: 'later' }), { metadata: meta() });
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(error.details).toContain('did not complete within 1 s');
    const requestId = String(metadata?.get('nvcf-reqid')[0]);
    expect(error.details).toContain(requestId);

    // A worker comes back and answers the queued request; pexec's status poll hands the result out.
    await h.worker();
    const res = await gfetch(`${http.url}/v2/nvcf/pexec/status/${requestId}`, {
      headers: { 'nvcf-poll-seconds': '30' },
    });
    expect(res.status).toBe(200);
    // The answer the call would have had: a ModelInferResponse, as gRPC's own bytes.
    expect(res.headers.get('content-type')).toBe(MODEL_INFER_RESPONSE_TYPE);
    const decode = loadKserveProtos().inference.ModelInfer!.responseDeserialize;
    const answer = decode(Buffer.from(await res.arrayBuffer())) as ModelInferResponseMsg;
    expectSimpleAnswer(answer);
    expect(answer.id).toBe('later');
  });
});
