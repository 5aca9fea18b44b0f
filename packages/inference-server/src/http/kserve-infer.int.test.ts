import { request as httpRequest } from 'node:http';
import { deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { decodeHttpInferResponse, encodeHttpInferRequest, type InferResponse } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type KserveFixture,
  outputOf,
  postInfer,
  simpleInputs,
  simpleJsonBody,
  simpleTensors,
  startKserveFixture,
} from './kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const infer = (model: string, body: Uint8Array | string, headers: Record<string, string> = {}, query = '') =>
  postInfer(fx.url, model, body, headers, query);

function expectSimpleResults(res: InferResponse): void {
  const { input0, input1 } = simpleInputs();
  expect(res.model_name).toBe('simple');
  expect(res.model_version).toBe('1');
  const sum = outputOf(res, 'OUTPUT0');
  const diff = outputOf(res, 'OUTPUT1');
  expect(sum.datatype).toBe('INT32');
  expect(sum.shape).toEqual([1, 16]);
  expect([...(sum.data as Int32Array)]).toEqual([...input0].map((v, i) => v + (input1[i] ?? 0)));
  expect([...(diff.data as Int32Array)]).toEqual([...input0].map((v, i) => v - (input1[i] ?? 0)));
}

describe('simple: JSON, binary and mixed', () => {
  it('answers a JSON request without a Content-Type as JSON, ignoring unknown query parameters', async () => {
    const { res, decoded } = await infer('simple', simpleJsonBody({ id: 'req-7' }), {}, '?test_1=1&test_2=2');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('inference-header-content-length')).toBeNull();
    expect(decoded.id).toBe('req-7');
    expectSimpleResults(decoded);
  });

  it('takes a versioned route and nested or flat data', async () => {
    const { input0, input1 } = simpleInputs();
    const body = JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [[...input0]] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: [...input1] },
      ],
    });
    const { decoded } = await infer('simple/versions/1', body, { 'content-type': 'application/json' });
    expectSimpleResults(decoded);
  });

  it('answers all outputs binary for a binary request with binary_data_output', async () => {
    const req = encodeHttpInferRequest({ inputs: simpleTensors() }, { binaryInputs: true, binaryDataOutput: true });
    const { res, decoded } = await infer('simple', req.body, {
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
      'content-type': 'application/octet-stream',
    });
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(Number(res.headers.get('inference-header-content-length'))).toBeGreaterThan(0);
    expectSimpleResults(decoded);
  });

  it('mixes JSON and binary both ways, as simple_http_infer_client.py does', async () => {
    const req = encodeHttpInferRequest(
      { inputs: simpleTensors() },
      {
        binaryInputs: new Set(['INPUT1']),
        outputs: [
          { name: 'OUTPUT0', binary_data: true },
          { name: 'OUTPUT1', binary_data: false },
        ],
      },
    );
    const { res, bytes, decoded } = await infer('simple', req.body, {
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
    });
    const ihcl = Number(res.headers.get('inference-header-content-length'));
    expect(ihcl).toBeGreaterThan(0);
    expectSimpleResults(decoded);
    // OUTPUT0 travelled binary (64 bytes after the JSON), OUTPUT1 inline. (fetch undid the gzip it asked for.)
    expect(bytes.length).toBe(ihcl + 64);
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, ihcl))) as { outputs: { data?: unknown }[] };
    expect(json.outputs.map((o) => o.data === undefined)).toEqual([true, false]);
  });

  it('returns only the requested outputs, and binary_data overrides binary_data_output', async () => {
    const body = simpleJsonBody({
      parameters: { binary_data_output: true },
      outputs: [{ name: 'OUTPUT1', parameters: { binary_data: false } }],
    });
    const { res, decoded } = await infer('simple', body);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(decoded.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect([...(outputOf(decoded, 'OUTPUT1').data as Int32Array)]).toEqual(
      [...simpleInputs().input0].map((v) => v - 1),
    );
  });

  it('runs a batch of several rows', async () => {
    const rows = 5;
    const a = Int32Array.from({ length: rows * 16 }, (_, i) => i * 3);
    const b = Int32Array.from({ length: rows * 16 }, (_, i) => i);
    const req = encodeHttpInferRequest(
      {
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data: a },
          { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data: b },
        ],
      },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const { decoded } = await infer('simple', req.body, {
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
    });
    expect(outputOf(decoded, 'OUTPUT0').shape).toEqual([rows, 16]);
    expect([...(outputOf(decoded, 'OUTPUT1').data as Int32Array)]).toEqual([...a].map((v, i) => v - (b[i] ?? 0)));
  });
});

describe('raw single-input requests (Inference-Header-Content-Length: 0)', () => {
  it('takes the whole body as the only input and answers every output binary', async () => {
    const values = new Float32Array([1.5, -2, 0.25, 1e6, -0]);
    const { res, decoded } = await infer('identity_fp32', new Uint8Array(values.buffer), {
      'inference-header-content-length': '0',
    });
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const out = outputOf(decoded, 'OUTPUT0');
    expect(out.shape).toEqual([1, 5]);
    expect([...(out.data as Float32Array)]).toEqual([...values]);
  });

  it('refuses raw mode for a model with two inputs', async () => {
    const res = await fetch(`${fx.url}/v2/models/simple/infer`, {
      method: 'POST',
      body: new Uint8Array(128),
      headers: { 'inference-header-content-length': '0' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('exactly one input');
  });
});

describe('compression', () => {
  it('decompresses gzip and deflate request bodies', async () => {
    const json = Buffer.from(simpleJsonBody());
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
    ] as const) {
      const { decoded } = await infer('simple', body, { 'content-encoding': encoding });
      expectSimpleResults(decoded);
    }
  });

  it('decompresses a compressed binary request, the header counting decompressed bytes', async () => {
    const req = encodeHttpInferRequest({ inputs: simpleTensors() }, { binaryInputs: true });
    const { decoded } = await infer('simple', gzipSync(req.body), {
      'content-encoding': 'gzip',
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
    });
    expectSimpleResults(decoded);
  });

  /** node:http rather than fetch: fetch would undo the Content-Encoding before the test could see it. */
  const rawPost = (path: string, body: Buffer, headers: Record<string, string>) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
      (resolve, reject) => {
        const req = httpRequest(`${fx.url}${path}`, { method: 'POST', headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      },
    );

  it('compresses JSON responses as Accept-Encoding asks', async () => {
    for (const [accept, expected, undo] of [
      ['gzip', 'gzip', gunzipSync],
      ['deflate', 'deflate', inflateSync],
      ['deflate;q=1, gzip;q=0.5', 'deflate', inflateSync],
      ['br, gzip', 'gzip', gunzipSync],
    ] as const) {
      const res = await rawPost('/v2/models/simple/infer', Buffer.from(simpleJsonBody()), {
        'accept-encoding': accept,
      });
      expect(res.status, accept).toBe(200);
      expect(res.headers['content-encoding'], accept).toBe(expected);
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      expectSimpleResults(decodeHttpInferResponse(undo(res.body)));
    }
  });

  it('leaves a response alone without an acceptable encoding', async () => {
    for (const accept of [undefined, 'identity', 'br', 'gzip;q=0']) {
      const res = await rawPost(
        '/v2/models/simple/infer',
        Buffer.from(simpleJsonBody()),
        accept ? { 'accept-encoding': accept } : {},
      );
      expect(res.headers['content-encoding'], accept).toBeUndefined();
      expectSimpleResults(decodeHttpInferResponse(res.body));
    }
  });

  it('compresses binary responses; Inference-Header-Content-Length counts decompressed bytes', async () => {
    const req = encodeHttpInferRequest({ inputs: simpleTensors() }, { binaryInputs: true, binaryDataOutput: true });
    const res = await rawPost('/v2/models/simple/infer', gzipSync(req.body), {
      'content-encoding': 'gzip',
      'accept-encoding': 'gzip',
      'inference-header-content-length': String(req.inferenceHeaderContentLength),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    const plain = gunzipSync(res.body);
    const ihcl = Number(res.headers['inference-header-content-length']);
    expect(plain.length).toBe(ihcl + 128);
    expectSimpleResults(decodeHttpInferResponse(plain, ihcl));
  });

  /** A request as a client with automatic decompression off makes it: the body exactly as sent. */
  const rawRequest = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; encoding: string | undefined; type: string | undefined; body: Buffer }>(
      (resolve, reject) => {
        const req = httpRequest(
          `${fx.url}${path}`,
          { method, headers: { 'accept-encoding': 'gzip, deflate' } },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () =>
              resolve({
                status: r.statusCode ?? 0,
                encoding: r.headers['content-encoding'],
                type: r.headers['content-type'],
                body: Buffer.concat(chunks),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );

  it.each([
    ['GET', '/v2'],
    ['GET', '/v2/models/simple'],
    ['GET', '/v2/models/simple/versions/1'],
    ['GET', '/v2/models/simple/config'],
    ['GET', '/v2/models/simple/stats'],
    ['GET', '/v2/models/stats'],
    ['POST', '/v2/repository/index'],
    ['GET', '/v2/models/nope'],
    ['POST', '/v2/models/simple/infer'],
    ['GET', '/api/status?format=json'],
  ])(
    '%s %s with Accept-Encoding: gzip answers plain JSON (Triton compresses successful infers only)',
    async (method, path) => {
      // The infer row sends a body the model refuses: an error answer is not compressed either.
      const res = await rawRequest(method, path, path.endsWith('/infer') ? Buffer.from('{"inputs":[]}') : undefined);
      expect(res.encoding).toBeUndefined();
      expect(res.type).toContain('application/json');
      expect(() => JSON.parse(res.body.toString('utf8'))).not.toThrow();
      if (path.endsWith('/infer')) expect(res.status).toBe(400);
    },
  );

  it('health answers are never compressed', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready', '/v2/models/simple/ready']) {
      const res = await rawRequest('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.encoding, path).toBeUndefined();
    }
  });
});
