import { readFile } from 'node:fs/promises';
import { status } from '@grpc/grpc-js';
import { createApiKeyStore } from '@nvcf/control-store';
import { MESSAGE_FRAMING_ALLOWANCE_BYTES } from '@nvcf/gateway';
import type { ModelInferResponseMsg } from '@nvcf/kserve-grpc';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayGrpcFixture,
  type GrpcClient,
  grpcClient,
  int32Bytes,
  int32sOf,
  startGatewayGrpcFixture,
  streamedModelInfer,
} from './grpc-test-fixture.ts';
import { ADMIN_KEY, type ChildGateway, createHarness, fnId, type Harness } from './harness.ts';

const MiB = 1024 * 1024;
/** The gateway's defaults: MAX_REQUEST_BODY_BYTES and MAX_TENSOR_ELEMENTS (the worker's). */
const BODY_LIMIT = 5 * MiB;
const ELEMENT_LIMIT = 1 << 26;

let h: Harness;
let fx: GatewayGrpcFixture;
let grpc: GrpcClient;
let listOnlyKey: string;

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  fx = await startGatewayGrpcFixture(h);
  grpc = fx.client;
  const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
  listOnlyKey = (await store.create({ name: 'list', scopes: ['list_functions'] })).key;
});
afterAll(async () => {
  fx?.close();
  await h?.close();
});

const meta = (extra: Record<string, string> = {}) => ({
  'function-id': fnId('simple'),
  authorization: `Bearer ${ADMIN_KEY}`,
  ...extra,
});

const INPUT0 = Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Array.from({ length: 16 }, (_, i) => 2 * i + 1);
const simple = () => ({
  model_name: 'simple',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
  ],
  raw_input_contents: [int32Bytes(INPUT0), int32Bytes(INPUT1)],
});

/** One INT32 input of `bytes` raw bytes: a message of about that size. */
const sized = (bytes: number) => ({
  model_name: 'simple',
  inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, bytes / 4] }],
  raw_input_contents: [Buffer.alloc(bytes)],
});

const expectServing = async (client: GrpcClient) => {
  const { response } = await client.call<ModelInferResponseMsg>('ModelInfer', simple(), { metadata: meta() });
  expect(int32sOf(response.raw_output_contents[0]!)).toEqual(INPUT0.map((v, i) => v + INPUT1[i]!));
};

describe('credentials are checked before the message is read', () => {
  // 64 MiB is far over the 5 MiB message limit: had grpc-js read as much as the message's length prefix,
  // the call would end RESOURCE_EXHAUSTED. Ending with the credential's status proves it never did.
  const big = sized(64 * MiB);

  it('no credential or a wrong one: UNAUTHENTICATED, not RESOURCE_EXHAUSTED', async () => {
    const none = await grpc.fail('ModelInfer', big, { metadata: { 'function-id': fnId('simple') } });
    expect(none.error.code).toBe(status.UNAUTHENTICATED);
    expect(none.error.details).toBe('client is unauthorized');
    const wrong = await grpc.fail('ModelInfer', big, { metadata: meta({ authorization: 'Bearer nvapi-not-a-key' }) });
    expect(wrong.error.code).toBe(status.UNAUTHENTICATED);
    await expectServing(grpc);
  });

  it('a credential without invoke_function, or no function-id: refused on the metadata too', async () => {
    const noScope = await grpc.fail('ModelInfer', big, { metadata: meta({ authorization: `Bearer ${listOnlyKey}` }) });
    expect(noScope.error.code).toBe(status.PERMISSION_DENIED);
    const noFunction = await grpc.fail('ModelInfer', big, { metadata: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(noFunction.error.code).toBe(status.INVALID_ARGUMENT);
    expect(noFunction.error.details).toContain('function-id');
  });

  it('health checks stay open without a credential', async () => {
    expect(await grpc.check('')).toEqual({ status: 'SERVING' });
  });
});

describe('message and body limits', () => {
  it('an authorized message over MAX_REQUEST_BODY_BYTES + framing → RESOURCE_EXHAUSTED; the port keeps serving', async () => {
    const over = await grpc.fail('ModelInfer', sized(BODY_LIMIT + MESSAGE_FRAMING_ALLOWANCE_BYTES), {
      metadata: meta(),
    });
    expect(over.error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(over.error.details).toContain(String(BODY_LIMIT + MESSAGE_FRAMING_ALLOWANCE_BYTES));
    await expectServing(grpc);
  });

  it('a message within the limit whose queued body is over it → RESOURCE_EXHAUSTED, nothing queued', async () => {
    // int_contents zeros are one protobuf byte each and four queued bytes: 20 000 of them pass the 64 KiB
    // (+ framing) message limit and encode to ~80 kB.
    const { client } = await fx.startServer({ MAX_REQUEST_BODY_BYTES: String(64 * 1024) });
    const zeros = new Array<number>(20_000).fill(0);
    const { error, metadata } = await client.fail(
      'ModelInfer',
      {
        model_name: 'simple',
        inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, zeros.length], contents: { int_contents: zeros } }],
      },
      { metadata: meta() },
    );
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toContain('request body exceeds 65536 bytes');
    // `nvcf-reqid` goes out once a request is queued: none was.
    expect(metadata?.get('nvcf-reqid') ?? []).toEqual([]);
    await expectServing(client);
  });
});

describe('tensor element limit (MAX_TENSOR_ELEMENTS)', () => {
  it("defaults to the worker's limit: a larger shape → INVALID_ARGUMENT before anything is allocated", async () => {
    const { error } = await grpc.fail(
      'ModelInfer',
      { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1 << 14, 1 << 13] }] },
      { metadata: meta() },
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toBe(`input 'INPUT0': shape [16384,8192] has too many elements (limit ${ELEMENT_LIMIT})`);
  });

  it('is configurable: a gateway with MAX_TENSOR_ELEMENTS=8 refuses a 16-element input', async () => {
    const { client } = await fx.startServer({ MAX_TENSOR_ELEMENTS: '8' });
    const { error } = await client.fail('ModelInfer', simple(), { metadata: meta() });
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toContain('too many elements (limit 8)');
  });
});

describe('a gateway process refusing a 1.5 GiB unauthenticated ModelInfer', () => {
  let child: ChildGateway;
  let address: string;

  beforeAll(async () => {
    // A body limit above the message: only the credential check stands between it and the gateway's memory.
    child = await h.spawnGateway({ MAX_REQUEST_BODY_BYTES: String(2 * 1024 * MiB) });
    address = `127.0.0.1:${await grpcPortOf(child)}`;
  });
  afterAll(() => {
    child?.child.kill('SIGTERM');
  });

  it('reads no more than one flow-control window of it, and its peak RSS barely moves', async () => {
    const client = grpcClient(address);
    try {
      await expectServing(client);
    } finally {
      client.close();
    }
    const before = await peakRssBytes(child.child.pid!);
    const outcome = await streamedModelInfer(address, meta({ authorization: 'Bearer nvapi-not-a-key' }), 1536 * MiB);
    expect(outcome.code).toBe(status.UNAUTHENTICATED);
    // HTTP/2 lets a client send one window (64 KiB by default) that nobody reads; the gateway read none of
    // it, so the client could not send more. A gateway reading the message would have taken all 1.5 GiB.
    expect(outcome.bytesSent).toBeLessThan(MiB);
    const grown = (await peakRssBytes(child.child.pid!)) - before;
    console.info(
      `refusing a 1.5 GiB unauthenticated ModelInfer: ${outcome.bytesSent} bytes sent, peak RSS +${(grown / MiB).toFixed(1)} MiB`,
    );
    expect(grown).toBeLessThan(16 * MiB);
  });
});

/** The port from the spawned gateway's `gateway gRPC listening` log line (written right after it binds). */
async function grpcPortOf(child: ChildGateway): Promise<number> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const line = child.logs().find((l) => l.msg === 'gateway gRPC listening');
    if (line) return Number(line.port);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the spawned gateway never opened its gRPC port');
}

/** VmHWM: the most resident memory the process has ever had. */
async function peakRssBytes(pid: number): Promise<number> {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) * 1024;
}
