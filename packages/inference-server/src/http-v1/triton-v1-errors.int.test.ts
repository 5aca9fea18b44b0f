import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceCore } from '../core/create-core.ts';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';
import type { RequestStatusCode } from '../triton-v1/v1-messages.ts';
import { tritonV1Routes } from './triton-v1-routes.ts';
import { nvStatus, SIMPLE_HEADER, simpleBody } from './v1-test-helpers.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const infer = (path: string, header: string | undefined, body: Uint8Array = simpleBody(), query = '') =>
  fetch(`${fx.url}/api/infer/${path}${query}`, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: header === undefined ? {} : { 'NV-InferRequest': header },
  });

/** Every failure: 400, NV-Status with the code, the message again as a plain-text body. */
async function expectFailure(res: Response, code: RequestStatusCode, message: string | RegExp): Promise<void> {
  expect(res.status).toBe(400);
  const status = nvStatus(res);
  expect(status).toMatchObject({ code, server_id: 'inference:0' });
  expect(status.request_id).toBeGreaterThan(0);
  if (typeof message === 'string') expect(status.msg).toBe(message);
  else expect(status.msg).toMatch(message);
  expect(res.headers.get('content-type')).toContain('text/plain');
  expect(await res.text()).toBe(status.msg);
}

const strings = (values: string[]) =>
  Buffer.concat(values.flatMap((v) => [Buffer.from(Uint32Array.of(Buffer.byteLength(v)).buffer), Buffer.from(v)]));

describe('infer request errors', () => {
  it.each([
    [
      'unknown field',
      'batch_size: 1 inputs { name: "INPUT0" }',
      /^NV-InferRequest:1:15: unknown field 'inputs' in InferRequestHeader$/,
    ],
    ['wrong value type', 'batch_size: "one"', /expects uint32, found string "one"/],
    ['an unquoted string', 'batch_size: 1 input { name: INPUT0 }', /expects string, found 'INPUT0'/],
    ['field set twice', 'batch_size: 1 batch_size: 2', /set more than once/],
  ])('bad text protobuf (%s) is INVALID_ARG with its position', async (_, header, message) => {
    await expectFailure(await infer('simple', header), 'INVALID_ARG', message);
  });

  it('byte-size mismatches are INVALID_ARG naming the sizes', async () => {
    await expectFailure(
      await infer('simple', SIMPLE_HEADER, simpleBody().subarray(0, 120)),
      'INVALID_ARG',
      'the request body has 120 bytes, but the NV-InferRequest inputs need 128 (INPUT0 64 + INPUT1 64)',
    );
    await expectFailure(
      await infer('simple', SIMPLE_HEADER, new Uint8Array(132)),
      'INVALID_ARG',
      'the request body has 132 bytes, but the NV-InferRequest inputs need 128 (INPUT0 64 + INPUT1 64)',
    );
    await expectFailure(
      await infer('simple', SIMPLE_HEADER.replace('{ name: "INPUT1" }', '{ name: "INPUT1" batch_byte_size: 60 }')),
      'INVALID_ARG',
      "input 'INPUT1': batch_byte_size 60 does not match the 64 bytes that shape [1,16] of INT32 needs",
    );
  });

  it('STRING inputs need batch_byte_size and well-formed length prefixes', async () => {
    const body = strings(['a', 'bc']);
    await expectFailure(
      await infer('identity_bytes', 'batch_size: 1 input { name: "INPUT0" dims: 2 } output { name: "OUTPUT0" }', body),
      'INVALID_ARG',
      "input 'INPUT0': batch_byte_size is required for STRING inputs",
    );
    const broken = Buffer.from(body);
    broken.writeUInt32LE(99, 5);
    await expectFailure(
      await infer(
        'identity_bytes',
        `batch_size: 1 input { name: "INPUT0" dims: 2 batch_byte_size: ${broken.length} } output { name: "OUTPUT0" }`,
        broken,
      ),
      'INVALID_ARG',
      "input 'INPUT0': BYTES element 1: length prefix says 99 bytes but only 2 remain",
    );
  });

  it('variable dims without dims, and dims that contradict the config, are INVALID_ARG', async () => {
    await expectFailure(
      await infer(
        'identity_fp32',
        'batch_size: 1 input { name: "INPUT0" } output { name: "OUTPUT0" }',
        new Uint8Array(8),
      ),
      'INVALID_ARG',
      "input 'INPUT0': the model config has variable dims [-1]; the request header must give 'dims'",
    );
    await expectFailure(
      await infer('simple', SIMPLE_HEADER.replace('{ name: "INPUT0" }', '{ name: "INPUT0" dims: 4 dims: 4 }')),
      'INVALID_ARG',
      "input 'INPUT0': dims [4,4] do not match the model config's dims [16]",
    );
  });

  it('unknown, missing and repeated tensors, bad batch sizes and class counts are INVALID_ARG', async () => {
    const cases: [string, string][] = [
      [SIMPLE_HEADER.replace('INPUT1', 'INPUTX'), "unexpected inference input 'INPUTX' for model 'simple'"],
      [
        'batch_size: 1 input { name: "INPUT0" } output { name: "OUTPUT0" }',
        "expected 2 inputs but got 1 inputs for model 'simple': missing 'INPUT1'",
      ],
      [SIMPLE_HEADER.replace('OUTPUT1', 'OUTPUT9'), "unexpected inference output 'OUTPUT9' for model 'simple'"],
      [SIMPLE_HEADER.replace('OUTPUT1', 'OUTPUT0'), "output 'OUTPUT0' is requested more than once"],
      [SIMPLE_HEADER.replace('batch_size: 1 ', ''), "inference request batch-size must be >= 1 for 'simple', got 0"],
      [
        SIMPLE_HEADER.replace('{ name: "OUTPUT0" }', '{ name: "OUTPUT0" cls { } }'),
        "output 'OUTPUT0': cls.count must be at least 1",
      ],
    ];
    for (const [header, message] of cases) await expectFailure(await infer('simple', header), 'INVALID_ARG', message);
  });

  it('classification of a STRING output is refused by the core, as in V2', async () => {
    const body = strings(['a']);
    await expectFailure(
      await infer(
        'identity_bytes',
        `batch_size: 1 input { name: "INPUT0" dims: 1 batch_byte_size: ${body.length} } output { name: "OUTPUT0" cls { count: 1 } }`,
        body,
      ),
      'INVALID_ARG',
      "class result not available for output 'OUTPUT0' due to unsupported type 'BYTES'",
    );
  });

  it('unknown models and versions are UNAVAILABLE; a version that is not a number is INVALID_ARG', async () => {
    await expectFailure(
      await infer('nope', SIMPLE_HEADER),
      'UNAVAILABLE',
      "Inference request for unknown model 'nope'",
    );
    await expectFailure(
      await infer('simple/7', SIMPLE_HEADER),
      'UNAVAILABLE',
      "Inference request for unknown version 7 of model 'simple'",
    );
    await expectFailure(
      await infer('simple/one', SIMPLE_HEADER),
      'INVALID_ARG',
      "invalid model version 'one': must be a non-negative integer or -1",
    );
  });

  it('shared memory is UNSUPPORTED, in a header or as an endpoint', async () => {
    await expectFailure(
      await infer(
        'simple',
        SIMPLE_HEADER.replace('{ name: "OUTPUT0" }', '{ name: "OUTPUT0" shared_memory { name: "r" } }'),
      ),
      'UNSUPPORTED',
      "output 'OUTPUT0': shared memory is not supported by this server",
    );
    await expectFailure(
      await fetch(`${fx.url}/api/sharedmemorycontrol/register/r/key/0/64`, { method: 'POST' }),
      'UNSUPPORTED',
      'shared memory is not supported by this server',
    );
  });

  it('a format other than text or binary is INVALID_ARG', async () => {
    await expectFailure(
      await infer('simple', SIMPLE_HEADER, simpleBody(), '?format=json'),
      'INVALID_ARG',
      "unknown format 'json': expected text, binary",
    );
  });
});

describe('other endpoint errors', () => {
  it('unknown endpoints and methods under /api are 400 NOT_FOUND with NV-Status', async () => {
    await expectFailure(await fetch(`${fx.url}/api/nothing`), 'NOT_FOUND', 'no v1 endpoint GET /api/nothing');
    await expectFailure(await fetch(`${fx.url}/api/infer/simple`), 'NOT_FOUND', 'no v1 endpoint GET /api/infer/simple');
    await expectFailure(
      await fetch(`${fx.url}/api/modelcontrol/reload/simple`, { method: 'POST' }),
      'NOT_FOUND',
      'no v1 endpoint POST /api/modelcontrol/reload/simple',
    );
  });

  it('bad health modes and status formats are INVALID_ARG', async () => {
    await expectFailure(
      await fetch(`${fx.url}/api/health/alive`),
      'INVALID_ARG',
      "unknown health mode 'alive': expected 'live' or 'ready'",
    );
    await expectFailure(
      await fetch(`${fx.url}/api/status?format=xml`),
      'INVALID_ARG',
      "unknown format 'xml': expected text, binary, json",
    );
  });

  it('loading a model the repository does not hold fails with its reason', async () => {
    const res = await fetch(`${fx.url}/api/modelcontrol/load/nope`, { method: 'POST' });
    expect(res.status).toBe(400);
    const status = nvStatus(res);
    expect(status.code).not.toBe('SUCCESS');
    expect(status.msg).toContain("failed to load 'nope'");
  });

  it('an over-size body is INVALID_ARG and closes the connection', async () => {
    const app = tritonV1Routes(fx.core, { logger: pino({ level: 'silent' }), maxBodyBytes: 100 });
    const res = await app.request('/api/infer/simple', {
      method: 'POST',
      body: simpleBody(),
      headers: { 'NV-InferRequest': SIMPLE_HEADER },
    });
    await expectFailure(res, 'INVALID_ARG', /100/);
    expect(res.headers.get('connection')).toBe('close');
  });
});

describe('readiness', () => {
  it('strict readiness (default) is 400 while a model failed to load; --strict-readiness=false is 200', async () => {
    await mkdir(join(fx.dir, 'broken', '1'), { recursive: true });
    await writeFile(join(fx.dir, 'broken', '1', 'model.onnx'), 'not an onnx model');
    const logger = pino({ level: 'silent' });
    const core = await startInferenceCore(
      { modelRepository: fx.dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
      logger,
    );
    const servers = [true, false].map((strictReadiness) => {
      const app = tritonV1Routes(core, { logger, strictReadiness });
      return new Promise<ReturnType<typeof serve>>((resolve) => {
        const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
      });
    });
    const [strict, relaxed] = await Promise.all(servers);
    const url = (s: ReturnType<typeof serve>) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    try {
      const notReady = await fetch(`${url(strict!)}/api/health/ready`);
      expect(notReady.status).toBe(400);
      expect(nvStatus(notReady).code).toBe('SUCCESS');
      const ready = await fetch(`${url(relaxed!)}/api/health/ready`);
      expect(ready.status).toBe(200);
      // The failed model is listed, without a config or versions.
      const status = await fetch(`${url(strict!)}/api/status/broken`);
      expect(status.status).toBe(200);
      expect(await status.text()).toContain('key: "broken"');
    } finally {
      for (const s of [strict, relaxed]) await new Promise((r) => s!.close(r));
      await core.close();
    }
  });
});
