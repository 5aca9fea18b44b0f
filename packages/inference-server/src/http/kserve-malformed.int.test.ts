import { request as httpRequest } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import { encodeHttpInferRequest } from '@nvcf/protocol';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningKserveHttpServer, startKserveHttpServer } from './kserve-server.ts';
import { type KserveFixture, simpleJsonBody, simpleTensors, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
/** A second server over the same core with small limits. */
let small: RunningKserveHttpServer;
const SMALL_BODY = 16 * 1024;
const SMALL_ELEMENTS = 1000;

beforeAll(async () => {
  fx = await startKserveFixture();
  small = await startKserveHttpServer(fx.core, {
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
    maxBodyBytes: SMALL_BODY,
    maxElements: SMALL_ELEMENTS,
  });
});
afterAll(async () => {
  await small?.close();
  await fx?.close();
});

const utf8 = new TextEncoder();

async function send(
  body: Uint8Array | string,
  headers: Record<string, string> = {},
  model = 'simple',
  base = fx.url,
): Promise<{ status: number; error: string; headers: Headers }> {
  const res = await fetch(`${base}/v2/models/${model}/infer`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers,
  });
  const text = await res.text();
  let error = '';
  if (res.status !== 200) {
    const parsed = JSON.parse(text) as { error?: unknown };
    expect(typeof parsed.error, text).toBe('string');
    error = parsed.error as string;
  }
  return { status: res.status, error, headers: res.headers };
}

/** After every refusal the server must still answer a valid request. */
async function expectStillServing(): Promise<void> {
  const res = await send(simpleJsonBody());
  expect(res.status).toBe(200);
}

async function expect400(
  body: Uint8Array | string,
  headers: Record<string, string>,
  match: RegExp | string,
  model?: string,
) {
  const res = await send(body, headers, model);
  expect(res.status, `${res.error} (${String(match)})`).toBe(400);
  if (typeof match === 'string') expect(res.error).toContain(match);
  else expect(res.error).toMatch(match);
  await expectStillServing();
}

const ihcl = (n: number | string) => ({ 'inference-header-content-length': String(n) });

const binarySimple = () => encodeHttpInferRequest({ inputs: simpleTensors() }, { binaryInputs: true });
const input = (over: Record<string, unknown>) => ({
  name: 'INPUT0',
  datatype: 'INT32',
  shape: [1, 16],
  data: new Array(16).fill(1),
  ...over,
});
const withInputs = (...inputs: unknown[]) => JSON.stringify({ inputs });
const second = input({ name: 'INPUT1' });

describe('malformed JSON bodies', () => {
  it.each([
    ['invalid JSON', '{"inputs": [', /not valid JSON/],
    ['empty body', '', /JSON/],
    ['a JSON array', '[1,2]', /JSON object/],
    ['a JSON number', '42', /JSON object/],
    ['no inputs', '{"id":"x"}', /inputs/],
    ['empty inputs', '{"inputs":[]}', /inputs/],
    ['inputs not an array', '{"inputs":{}}', /inputs/],
    ['an input without a name', withInputs({ datatype: 'INT32', shape: [1, 16], data: [] }), /name/],
    ['wrong datatype string', withInputs(input({ datatype: 'INT33' }), second), /unknown datatype 'INT33'/],
    ['lower-case datatype', withInputs(input({ datatype: 'int32' }), second), /datatype/],
    ['too few elements', withInputs(input({ data: new Array(15).fill(1) }), second), /INPUT0/],
    ['too many elements', withInputs(input({ data: new Array(17).fill(1) }), second), /INPUT0/],
    ['negative dimension', withInputs(input({ shape: [-1, 16] }), second), /INPUT0/],
    ['fractional dimension', withInputs(input({ shape: [1.5, 16] }), second), /INPUT0/],
    ['shape not an array', withInputs(input({ shape: 16 }), second), /shape/],
    ['missing data', withInputs(input({ data: undefined }), second), /data/],
    ['string in INT32 data', withInputs(input({ data: ['a', ...new Array(15).fill(1)] }), second), /INPUT0/],
    ['INT32 overflow', withInputs(input({ data: [2 ** 31, ...new Array(15).fill(1)] }), second), /INPUT0/],
    ['fractional INT32', withInputs(input({ data: [0.5, ...new Array(15).fill(1)] }), second), /INPUT0/],
    ['ragged nested data', withInputs(input({ data: [[1, 2], [3]] }), second), /INPUT0/],
    ['duplicate input', withInputs(input({}), input({})), /duplicate/],
    ['unknown input name', withInputs(input({ name: 'NOPE' }), second), /NOPE/],
    ['missing input', withInputs(input({})), /INPUT1/],
    ['wrong datatype for the model', withInputs(input({ datatype: 'FP32' }), second), /INPUT0/],
    [
      'wrong row length for the model',
      withInputs(input({ shape: [1, 15], data: new Array(15).fill(1) }), second),
      /INPUT0/,
    ],
    ['batch over max_batch_size', withInputs(input({ shape: [9, 16], data: new Array(144).fill(1) }), second), /batch/],
    ['unknown requested output', JSON.stringify({ inputs: [input({}), second], outputs: [{ name: 'OUT9' }] }), /OUT9/],
    [
      'binary_data not a boolean',
      JSON.stringify({ inputs: [input({}), second], outputs: [{ name: 'OUTPUT0', parameters: { binary_data: 1 } }] }),
      /binary_data/,
    ],
    [
      'binary_data_output not a boolean',
      JSON.stringify({ inputs: [input({}), second], parameters: { binary_data_output: 'yes' } }),
      /binary_data_output/,
    ],
    [
      'a reserved triton_ parameter',
      JSON.stringify({ inputs: [input({}), second], parameters: { triton_enable: true } }),
      /triton_/,
    ],
    ['id not a string', JSON.stringify({ id: 5, inputs: [input({}), second] }), /id/],
    ['BF16 in JSON', withInputs(input({ datatype: 'BF16' }), second), /BF16/],
  ])('%s → 400', async (_what, body, match) => {
    await expect400(body, {}, match);
  });

  it('refuses bytes that are not UTF-8 in the JSON', async () => {
    const body = Buffer.concat([
      Buffer.from('{"id":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`",${simpleJsonBody().slice(1)}`),
    ]);
    await expect400(body, {}, /UTF-8/);
  });

  it('refuses a shape whose element count is over the limit before allocating it', async () => {
    await expect400(withInputs(input({ shape: [100000, 100000], data: [] }), second), {}, /INPUT0/);
    const res = await send(withInputs(input({ shape: [1, 2000], data: [] }), second), {}, 'simple', small.url);
    expect(res.status).toBe(400);
    expect(res.error).toContain('INPUT0');
  });
});

describe('malformed binary bodies', () => {
  it('refuses a body truncated inside the binary part', async () => {
    const req = binarySimple();
    await expect400(req.body.subarray(0, req.body.length - 3), ihcl(req.inferenceHeaderContentLength ?? 0), /INPUT1/);
  });

  it('refuses trailing bytes after the last binary input', async () => {
    const req = binarySimple();
    await expect400(
      Buffer.concat([req.body, Buffer.alloc(4)]),
      ihcl(req.inferenceHeaderContentLength ?? 0),
      /left|unused|trailing|extra|consumed/i,
    );
  });

  it('refuses a wrong Inference-Header-Content-Length', async () => {
    const req = binarySimple();
    const n = req.inferenceHeaderContentLength ?? 0;
    await expect400(req.body, ihcl(n - 1), /JSON/);
    await expect400(req.body, ihcl(n + 1), /JSON/);
    await expect400(req.body, ihcl(req.body.length + 10), /larger than the request body/);
    for (const bad of ['abc', '-1', '1.5', '', ' '])
      await expect400(req.body, ihcl(bad), /Inference-Header-Content-Length/);
  });

  it('refuses binary data sent without the header', async () => {
    await expect400(binarySimple().body, {}, /JSON/);
  });

  it('refuses a binary_data_size that lies', async () => {
    const build = (size: unknown, extra = 0) => {
      const head = JSON.stringify({
        inputs: [
          input({}),
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: size } },
        ],
      });
      return {
        body: Buffer.concat([Buffer.from(head), Buffer.alloc(64 + extra)]),
        headers: ihcl(Buffer.byteLength(head)),
      };
    };
    for (const [size, extra, match] of [
      [128, 0, /INPUT1/],
      [32, 0, /INPUT1/],
      [60, -4, /INPUT1/],
      [-4, 0, /binary_data_size/],
      ['64', 0, /binary_data_size/],
      [64.5, 0, /binary_data_size/],
    ] as const) {
      const { body, headers } = build(size, extra);
      await expect400(body, headers, match);
    }
  });

  it('refuses data and binary_data_size on the same input', async () => {
    const head = JSON.stringify({
      inputs: [input({}), { ...second, parameters: { binary_data_size: 64 } }],
    });
    await expect400(Buffer.concat([Buffer.from(head), Buffer.alloc(64)]), ihcl(Buffer.byteLength(head)), /INPUT1/);
  });

  it('refuses BYTES elements whose length prefixes do not add up', async () => {
    const head = (size: number) =>
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], parameters: { binary_data_size: size } }],
      });
    const prefixed = (...parts: [number, Buffer][]) =>
      Buffer.concat(parts.flatMap(([n, b]) => [Buffer.from(new Uint32Array([n]).buffer), b]));
    for (const blob of [
      prefixed([3, Buffer.from('abc')], [100, Buffer.from('de')]), // second prefix past the end
      prefixed([3, Buffer.from('abc')]), // one element for shape [1,2]
      Buffer.concat([prefixed([1, Buffer.from('a')], [1, Buffer.from('b')]), Buffer.from([9])]), // a stray byte
      Buffer.from([1, 0]), // a cut prefix
      prefixed([0xffffffff, Buffer.from('x')], [0, Buffer.alloc(0)]), // 4 GiB claim
    ]) {
      const h = head(blob.length);
      await expect400(Buffer.concat([Buffer.from(h), blob]), ihcl(Buffer.byteLength(h)), /INPUT0/, 'identity_bytes');
    }
  });

  it('refuses BOOL bytes other than 0 and 1', async () => {
    const h = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'BOOL', shape: [1, 2], parameters: { binary_data_size: 2 } }],
    });
    await expect400(
      Buffer.concat([Buffer.from(h), Buffer.from([1, 2])]),
      ihcl(Buffer.byteLength(h)),
      /INPUT0/,
      'identity_bool',
    );
  });

  it('refuses a raw body that is not a whole number of elements', async () => {
    await expect400(new Uint8Array(7), ihcl(0), /INPUT0/, 'identity_fp32');
  });
});

describe('compressed bodies', () => {
  it('refuses garbage labelled gzip or deflate', async () => {
    await expect400(utf8.encode(simpleJsonBody()), { 'content-encoding': 'gzip' }, /gzip/);
    await expect400(utf8.encode('definitely not deflate'), { 'content-encoding': 'deflate' }, /deflate/);
    const gz = gzipSync(simpleJsonBody());
    await expect400(gz.subarray(0, gz.length - 10), { 'content-encoding': 'gzip' }, /gzip/);
    await expect400(gzipSync('{"inputs": ['), { 'content-encoding': 'gzip' }, /JSON/);
    await expect400(deflateSync('[]'), { 'content-encoding': 'deflate' }, /JSON object/);
  });

  it('answers an unsupported Content-Encoding with 400 (a client error, never a 5xx)', async () => {
    const res = await send(simpleJsonBody(), { 'content-encoding': 'br' });
    expect(res.status).toBe(400);
    expect(res.error).toContain('Content-Encoding');
    await expectStillServing();
  });
});

/** node:http, to send a chunked body and read the Connection header the server sets. */
function rawPost(
  base: string,
  chunks: Buffer[],
  headers: Record<string, string>,
): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/v2/models/simple/infer`, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    // The server may answer and close before a large upload is done.
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err),
    );
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('size limits', () => {
  it('refuses a body over the limit with 413 and Connection: close', async () => {
    const res = await rawPost(small.url, [Buffer.alloc(SMALL_BODY + 1, 0x20)], {
      'content-length': String(SMALL_BODY + 1),
    });
    expect(res.status).toBe(413);
    expect(res.connection).toBe('close');
    expect((JSON.parse(res.body) as { error: string }).error).toContain(String(SMALL_BODY));
  });

  it('refuses a chunked body once it passes the limit', async () => {
    const chunks = Array.from({ length: 8 }, () => Buffer.alloc(4096, 0x20));
    const res = await rawPost(small.url, chunks, { 'transfer-encoding': 'chunked' });
    expect(res.status).toBe(413);
    expect(res.connection).toBe('close');
  });

  it('accepts a chunked body under the limit', async () => {
    const json = Buffer.from(simpleJsonBody());
    const res = await rawPost(small.url, [json.subarray(0, 100), json.subarray(100)], {
      'transfer-encoding': 'chunked',
    });
    expect(res.status).toBe(200);
  });

  it('refuses a zip bomb by its decompressed size without inflating it all', async () => {
    // 1 MiB of zeros compresses to about 1 KiB: well under the compressed limit, far over the inflated one.
    const bomb = gzipSync(Buffer.alloc(1024 * 1024));
    expect(bomb.length).toBeLessThan(SMALL_BODY);
    const res = await send(bomb, { 'content-encoding': 'gzip' }, 'simple', small.url);
    expect(res.status).toBe(413);
    expect(res.error).toContain('decompressed');
    const deflateBomb = deflateSync(Buffer.alloc(1024 * 1024));
    expect((await send(deflateBomb, { 'content-encoding': 'deflate' }, 'simple', small.url)).status).toBe(413);
    // At the default 64 MiB limit: 256 MiB of zeros in ~250 KiB.
    const big = gzipSync(Buffer.alloc(256 * 1024 * 1024));
    const before = process.memoryUsage().rss;
    const refused = await send(big, { 'content-encoding': 'gzip' });
    expect(refused.status).toBe(413);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    await expectStillServing();
  });
});

describe('mutated bodies', () => {
  /** mulberry32: a fixed seed keeps failures reproducible. */
  const prng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  it('never answers a mutated JSON, binary or BYTES body with a 5xx', async () => {
    const next = prng(0xc0ffee);
    const int = (n: number) => Math.floor(next() * n);
    const bytesReq = encodeHttpInferRequest(
      {
        inputs: [
          { name: 'INPUT0', datatype: 'BYTES', shape: [1, 3], data: ['ab', '', 'cde'].map((s) => utf8.encode(s)) },
        ],
      },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const seeds = [
      { model: 'simple', ...binarySimple() },
      { model: 'simple', body: Buffer.from(simpleJsonBody()), inferenceHeaderContentLength: undefined },
      { model: 'identity_bytes', ...bytesReq },
    ];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 150; i++) {
      const seed = seeds[i % seeds.length];
      if (!seed) continue;
      let body = Buffer.from(seed.body);
      let header = seed.inferenceHeaderContentLength;
      switch (int(4)) {
        case 0: // flip a few bytes
          for (let k = 0; k <= int(4); k++) body[int(body.length)] = int(256);
          break;
        case 1: // append garbage
          body = Buffer.concat([body, Buffer.from(Array.from({ length: 1 + int(8) }, () => int(256)))]);
          break;
        case 2: // shift the header
          header = header === undefined ? int(body.length) : Math.max(0, header + int(9) - 4);
          break;
        default: // overwrite a digit in the JSON with another
          for (let k = 0; k < body.length; k++) if (body[k] === 0x36) body[k] = 0x30 + int(10);
      }
      const cut = int(4) === 1 ? body.subarray(0, int(body.length)) : body; // and sometimes truncate
      const res = await send(cut, header === undefined ? {} : ihcl(header), seed.model);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `${i}: ${res.error}`).toBeLessThan(500);
    }
    expect(statuses.get(400)).toBeGreaterThan(0);
    await expectStillServing();
  });
});
