import { decodeKserveResponse, kserveRequest, NvcfClient, type TensorInput } from '@nvcf/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness } from '../harness.ts';

let h: Harness;
let gw: Awaited<ReturnType<Harness['gateway']>>;
beforeAll(async () => {
  // Triton's examples bring simple_identity: BYTES echoed as they came, NULs and non-UTF-8 included.
  h = await createHarness({ tritonExamples: true });
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const a = Int32Array.from({ length: 16 }, (_, i) => i * 1000 - 7);
const b = Int32Array.from({ length: 16 }, (_, i) => 3 - i);
const simpleInputs: TensorInput[] = [
  { name: 'INPUT0', shape: [1, 16], data: a },
  { name: 'INPUT1', shape: [1, 16], data: b },
];
const sum = a.map((x, i) => x + (b[i] as number));
const difference = a.map((x, i) => x - (b[i] as number));

describe('NvcfClient.infer against a gateway and a worker', () => {
  let worker: Awaited<ReturnType<Harness['worker']>>;
  let nvcf: NvcfClient;
  beforeAll(async () => {
    worker = await h.worker();
    nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
  });
  afterAll(async () => {
    await worker?.close();
  });

  it('JSON: typed arrays in, Int32Array out', async () => {
    const out = await nvcf.infer(fnId('simple'), simpleInputs, { id: 'json-1' });
    expect(out).toMatchObject({ modelName: 'simple', id: 'json-1' });
    expect(out.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.outputs.get('OUTPUT0')).toMatchObject({ datatype: 'INT32', shape: [1, 16], data: sum });
    expect(out.outputs.get('OUTPUT1')?.data).toEqual(difference);
  });

  it('binary extension both ways: the gateway forwards Inference-Header-Content-Length each way', async () => {
    const out = await nvcf.infer(fnId('simple'), simpleInputs, { binary: true });
    expect(out.outputs.get('OUTPUT0')?.data).toEqual(sum);
    expect(out.outputs.get('OUTPUT1')?.data).toBeInstanceOf(Int32Array);
    expect(out.outputs.get('OUTPUT1')?.data).toEqual(difference);

    // What infer does, by hand: the answer really is binary (OUTPUT1's 64 bytes after the JSON).
    const req = kserveRequest(simpleInputs, { binary: true, outputs: ['OUTPUT1'] });
    const answer = await nvcf.invoke(fnId('simple'), req.body, { contentType: req.contentType, headers: req.headers });
    const headerLength = Number(answer.headers['inference-header-content-length']);
    expect(answer.contentType).toBe('application/octet-stream');
    expect(answer.body.byteLength - headerLength).toBe(64);
    const decoded = decodeKserveResponse(answer.body, headerLength);
    expect([...decoded.outputs.keys()]).toEqual(['OUTPUT1']);
    expect(decoded.outputs.get('OUTPUT1')?.data).toEqual(difference);
  });

  it('BYTES with NUL and non-UTF-8 bytes survive the binary form', async () => {
    const elements = [new Uint8Array([0, 0xff, 0, 0x80]), new TextEncoder().encode('a\0b'), new Uint8Array(0)];
    const out = await nvcf.infer(fnId('simple_identity'), [{ name: 'INPUT0', shape: [1, 3], data: elements }], {
      binary: true,
    });
    expect(out.outputs.get('OUTPUT0')).toMatchObject({ datatype: 'BYTES', shape: [1, 3], data: elements });
  });

  it('a refusal is an NvcfError with the problem', async () => {
    const wrongShape = [{ name: 'INPUT0', shape: [1, 4], data: new Int32Array(4) }, simpleInputs[1] as TensorInput];
    await expect(nvcf.infer(fnId('simple'), wrongShape, { binary: true })).rejects.toMatchObject({
      name: 'NvcfError',
      status: 400,
    });
  });
});

describe('NvcfClient.infer when the answer is over the direct limit', () => {
  it('JSON inputs, binary outputs: the answer from the result zip is decoded without its header length', async () => {
    const worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const out = await nvcf.infer(fnId('simple'), simpleInputs, { binaryOutputs: true });
    expect(out.outputs.get('OUTPUT0')?.data).toEqual(sum);
    expect(out.outputs.get('OUTPUT1')?.data).toEqual(difference);

    // By hand: the zip holds the body alone, so decodeKserveResponse finds where its JSON ends.
    const req = kserveRequest(simpleInputs, { binaryOutputs: true });
    const answer = await nvcf.invoke(fnId('simple'), req.body, { contentType: req.contentType, headers: req.headers });
    expect(answer.fromLargeResult).toBe(true);
    expect(answer.headers['inference-header-content-length']).toBeUndefined();
    expect(decodeKserveResponse(answer.body).outputs.get('OUTPUT0')?.data).toEqual(sum);
    await worker.close();
  });
});
