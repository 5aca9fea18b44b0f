import type { RunningGateway } from '@nvcf/gateway';
import { encodeHttpInferRequest, type InferRequest } from '@nvcf/protocol';
import { createInvocationProducer, createKeys, newRequestId } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, verId } from './harness.ts';

let h: Harness;
let gw: RunningGateway;
let worker: RunningWorker;

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const simple: InferRequest = {
  id: 'forms',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(3) },
  ],
};

/** Sends the same body to the worker's /infer and through pexec; both answers must be byte-identical. */
async function both(body: Buffer, headers: Record<string, string>) {
  const direct = await fetch(`http://127.0.0.1:${worker.ports.http}/v2/models/simple/infer`, {
    method: 'POST',
    headers: { ...headers, 'accept-encoding': 'identity' },
    body,
  });
  const viaPexec = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
    method: 'POST',
    headers: { ...headers, 'accept-encoding': 'identity' },
    body,
  });
  return {
    direct,
    viaPexec,
    directBody: Buffer.from(await direct.arrayBuffer()),
    pexecBody: Buffer.from(await viaPexec.arrayBuffer()),
  };
}

describe('pexec accepts the same request forms as the worker /infer and answers the same bytes', () => {
  it('JSON + binary inputs with binary outputs (tritonclient defaults)', async () => {
    const enc = encodeHttpInferRequest(simple, { binaryInputs: true, binaryDataOutput: true });
    const headers: Record<string, string> = {
      'inference-header-content-length': String(enc.inferenceHeaderContentLength),
    };
    const { direct, viaPexec, directBody, pexecBody } = await both(enc.body, headers);
    expect(direct.status).toBe(200);
    expect(viaPexec.status).toBe(200);
    expect(viaPexec.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(viaPexec.headers.get('content-type')).toBe('application/octet-stream');
    expect(viaPexec.headers.get('inference-header-content-length')).toBe(
      direct.headers.get('inference-header-content-length'),
    );
    expect(viaPexec.headers.get('nvcf-status')).toBe('fulfilled');
    expect(Buffer.compare(pexecBody, directBody)).toBe(0);
  });

  it("a binary body rides raw in its job's queue entry: no base64, no kept copy to write, read and drop", async () => {
    const enc = encodeHttpInferRequest(simple, { binaryInputs: true, binaryDataOutput: true });
    const monitor = await new Redis(h.redisUrl).monitor();
    const commands: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(args.map(String)));
    const res = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(enc.inferenceHeaderContentLength) },
      body: enc.body,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const requestId = res.headers.get('nvcf-reqid') ?? '';
    // MONITOR's copies can reach this client after the answer did: wait for the completion's last step.
    const completed = () =>
      commands.some((c) => c[0]?.toLowerCase() === 'publish' && c[1]?.endsWith(':completions') && c[2] === requestId);
    await expect.poll(completed, { timeout: 10_000 }).toBe(true);
    monitor.disconnect();
    const xadd = commands.find((c) => c[0]?.toLowerCase() === 'xadd' && c.includes(requestId)) ?? [];
    // Fields id, f, j, m, b: the job's JSON names the input's kind and type only, and b holds the body's bytes.
    expect(xadd.slice(3).filter((_, i) => i % 2 === 0)).toEqual(['id', 'f', 'j', 'm', 'b']);
    expect(JSON.parse(xadd[8] ?? '').input).toEqual({ kind: 'entry', contentType: 'application/octet-stream' });
    expect(commands.filter((c) => c.includes(createKeys(h.keyPrefix).requestInput(requestId)))).toEqual([]);
  });

  it('still answers a job queued by the release before, its binary body as base64 inside the job', async () => {
    const enc = encodeHttpInferRequest(simple, { binaryInputs: true, binaryDataOutput: true });
    const headers = { 'inference-header-content-length': String(enc.inferenceHeaderContentLength) };
    const producer = createInvocationProducer(h.redis, createKeys(h.keyPrefix), { attempts: 1, ttlSeconds: 60 });
    const requestId = newRequestId(verId('simple'));
    const input = {
      kind: 'bytes' as const,
      contentType: 'application/octet-stream',
      base64: enc.body.toString('base64'),
    };
    await producer.enqueue({ requestId, functionId: fnId('simple'), versionId: verId('simple'), input, headers });
    const { directBody } = await both(enc.body, headers);
    const res = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${requestId}`, { headers: { 'nvcf-poll-seconds': '30' } });
    expect(res.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), directBody)).toBe(0);
  });

  it('mixed: INPUT0 JSON, INPUT1 binary; OUTPUT0 binary, OUTPUT1 JSON', async () => {
    const enc = encodeHttpInferRequest(simple, {
      binaryInputs: new Set(['INPUT1']),
      outputs: [
        { name: 'OUTPUT0', binary_data: true },
        { name: 'OUTPUT1', binary_data: false },
      ],
    });
    const { viaPexec, directBody, pexecBody } = await both(enc.body, {
      'inference-header-content-length': String(enc.inferenceHeaderContentLength),
      'content-type': 'application/octet-stream',
    });
    expect(viaPexec.status).toBe(200);
    expect(Buffer.compare(pexecBody, directBody)).toBe(0);
    const jsonPart = JSON.parse(
      pexecBody.subarray(0, Number(viaPexec.headers.get('inference-header-content-length'))).toString(),
    ) as { outputs: { name: string; data?: number[]; parameters?: Record<string, number> }[] };
    expect(jsonPart.outputs.find((o) => o.name === 'OUTPUT1')?.data?.[0]).toBe(-3);
    expect(jsonPart.outputs.find((o) => o.name === 'OUTPUT0')?.parameters?.binary_data_size).toBe(64);
  });

  it('plain JSON with classification', async () => {
    const req = {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array(784).fill(0.25) }],
      outputs: [{ name: 'PROBABILITIES', parameters: { classification: 2 } }],
    };
    const direct = await fetch(`http://127.0.0.1:${worker.ports.http}/v2/models/classifier/infer`, {
      method: 'POST',
      headers: { 'accept-encoding': 'identity' },
      body: JSON.stringify(req),
    });
    const viaPexec = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('classifier')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(req),
    });
    const a = await direct.text();
    expect(await viaPexec.text()).toBe(a);
    expect(a).toMatch(/"datatype":"BYTES","shape":\[1,2\]/);
  });

  it('a lying binary_data_size is a 400 through pexec too', async () => {
    const enc = encodeHttpInferRequest(simple, { binaryInputs: true });
    const res = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(enc.inferenceHeaderContentLength) },
      body: enc.body.subarray(0, enc.body.length - 4),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
