/**
 * Conformance cases for the v1 HTTP API (TRTIS 1.x API) against the real core and the KServe HTTP server on a
 * free port: V01–V14 here, V15 (gRPC) in grpc-v1/triton-v1-grpc.int.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository, protoFromJson } from '@nvcf/models';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceCore } from '../core/inference-core.ts';
import { startKserveHttpServer } from '../http/kserve-server.ts';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';
import { SessionCache } from '../runtime/session-cache.ts';
import { decodeV1, parseV1Text, v1Schema } from '../triton-v1/v1-codec.ts';
import type { InferResponseHeaderMsg, ServerStatusMsg } from '../triton-v1/v1-messages.ts';
import { int32sOf, nvStatus, postV1Infer, SIMPLE_HEADER, simpleBody } from './v1-test-helpers.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const get = (path: string, init: RequestInit = {}) => fetch(`${fx.url}${path}`, init);
const sum = Array.from({ length: 16 }, (_, i) => i + 1);
const difference = Array.from({ length: 16 }, (_, i) => i - 1);
const simpleConfigShape = {
  name: 'simple',
  max_batch_size: 8,
  input: [
    { name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] },
    { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] },
  ],
  output: [
    { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] },
    { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] },
  ],
};

describe('health', () => {
  it('V01 GET /api/health/live is 200, empty, NV-Status SUCCESS', async () => {
    const res = await get('/api/health/live');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(res.headers.get('nv-status')).toContain('code: SUCCESS');
    expect(nvStatus(res)).toMatchObject({ code: 'SUCCESS', server_id: 'inference:0' });
  });

  it('V02 GET /api/health/ready is 400 with NV-Status SUCCESS during start-up, 200 once the models are loaded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'v1-startup-'));
    const logger = pino({ level: 'silent' });
    const sessions = new SessionCache({
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      logger,
    });
    const core = createInferenceCore({ repository: dir, sessions, logger });
    const http = await startKserveHttpServer(core, { host: '127.0.0.1', port: 0, logger });
    try {
      await generateExampleRepository(dir);
      const early = await fetch(`${http.url}/api/health/ready`);
      expect(early.status).toBe(400);
      expect(await early.text()).toBe('');
      expect(nvStatus(early).code).toBe('SUCCESS');
      expect((await fetch(`${http.url}/api/health/live`)).status).toBe(200);
      const status = await fetch(`${http.url}/api/status`);
      expect(await status.text()).toContain('ready_state: SERVER_INITIALIZING');

      await core.start();
      const ready = await fetch(`${http.url}/api/health/ready`);
      expect(ready.status).toBe(200);
      expect(nvStatus(ready).code).toBe('SUCCESS');
    } finally {
      await http.close();
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('status', () => {
  it('V03 GET /api/status is text format with every model, simple READY at version 1', async () => {
    const res = await get('/api/status');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(nvStatus(res).code).toBe('SUCCESS');
    const text = await res.text();
    expect(text).toContain('ready_state: SERVER_READY');
    expect(text).toMatch(/version_status \{\n\s+key: 1\n\s+value \{\n\s+ready_state: MODEL_READY/);
    const status = parseV1Text('ServerStatus', text, 'status') as unknown as ServerStatusMsg;
    expect(Object.keys(status.model_status)).toEqual(
      expect.arrayContaining(['simple', 'classifier', 'classifier_unlabeled', 'identity_fp32', 'identity_bytes']),
    );
    expect(status.model_status.simple).toMatchObject({
      config: simpleConfigShape,
      version_status: { '1': { ready_state: 'MODEL_READY' } },
    });
    expect(status).toMatchObject({ id: 'inference:0', version: fx.core.serverVersion });
    expect(status.uptime_ns).toBeGreaterThan(0);
  });

  it('V04 GET /api/status/simple?format=binary decodes as a ServerStatus holding simple alone', async () => {
    const res = await get('/api/status/simple?format=binary');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(nvStatus(res).code).toBe('SUCCESS');
    const status = decodeV1('ServerStatus', new Uint8Array(await res.arrayBuffer())) as unknown as ServerStatusMsg;
    expect(Object.keys(status.model_status)).toEqual(['simple']);
    expect(status.model_status.simple?.config).toMatchObject(simpleConfigShape);
    expect(status.model_status.simple?.version_status?.['1']?.ready_state).toBe('MODEL_READY');
    expect(status.ready_state).toBe('SERVER_READY');
  });

  it('V05 ?format=json and Accept: application/json give proto3 JSON with snake_case names', async () => {
    for (const res of [
      await get('/api/status/simple?format=json'),
      await get('/api/status/simple', { headers: { accept: 'application/json' } }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(nvStatus(res).code).toBe('SUCCESS');
      const json = (await res.json()) as {
        id: string;
        uptime_ns: unknown;
        model_status: Record<string, { config: object; version_status: Record<string, { ready_state: string }> }>;
      };
      expect(json).toMatchObject({ id: 'inference:0', ready_state: 'SERVER_READY' });
      expect(typeof json.uptime_ns).toBe('string');
      const simple = json.model_status.simple!;
      expect(simple.config).toMatchObject({ max_batch_size: 8, input: [{ name: 'INPUT0', dims: ['16'] }, {}] });
      expect(simple.version_status['1']?.ready_state).toBe('MODEL_READY');
      expect(JSON.stringify(json)).not.toMatch(/[a-z][A-Z]/);
      // The project's own JSON reader takes it back.
      expect(protoFromJson(json, v1Schema(), 'nvidia.inferenceserver.ServerStatus')).toMatchObject({
        model_status: { simple: { config: simpleConfigShape } },
      });
    }
  });

  it('V06 GET /api/status/foo is 400 NOT_FOUND naming foo', async () => {
    const res = await get('/api/status/foo');
    expect(res.status).toBe(400);
    const status = nvStatus(res);
    expect(status.code).toBe('NOT_FOUND');
    expect(status.msg).toContain("'foo'");
  });
});

describe('infer', () => {
  it('V07 POST /api/infer/simple: two raw outputs of 64 bytes, then the text InferResponseHeader', async () => {
    const answer = await postV1Infer(fx.url, 'simple', SIMPLE_HEADER, simpleBody());
    expect(answer.res.headers.get('content-type')).toBe('application/octet-stream');
    expect(answer.status.code).toBe('SUCCESS');
    expect(answer.header).toEqual({
      model_name: 'simple',
      model_version: 1,
      batch_size: 1,
      output: [
        { name: 'OUTPUT0', raw: { dims: [16], batch_byte_size: 64 } },
        { name: 'OUTPUT1', raw: { dims: [16], batch_byte_size: 64 } },
      ],
    });
    expect(int32sOf(answer.raw[0]!)).toEqual(sum);
    expect(int32sOf(answer.raw[1]!)).toEqual(difference);
    const trailer = parseV1Text('InferResponseHeader', new TextDecoder().decode(answer.trailer), 'body');
    expect(trailer).toMatchObject({ model_name: 'simple', model_version: 1, batch_size: 1 });
    expect((trailer as unknown as InferResponseHeaderMsg).output.map((o) => o.data_type)).toEqual([
      'TYPE_INT32',
      'TYPE_INT32',
    ]);
  });

  it('V08 ?format=binary: the same raw bytes, then a binary InferResponseHeader', async () => {
    const text = await postV1Infer(fx.url, 'simple', SIMPLE_HEADER, simpleBody());
    const binary = await postV1Infer(fx.url, 'simple', SIMPLE_HEADER, simpleBody(), '?format=binary');
    expect(binary.raw).toEqual(text.raw);
    const header = decodeV1('InferResponseHeader', binary.trailer);
    expect(header).toMatchObject({ model_name: 'simple', model_version: 1, batch_size: 1 });
    expect(header).toEqual({
      ...binary.header,
      output: binary.header.output.map((o) => ({ ...o, data_type: 'TYPE_INT32' })),
    });
  });

  it('V09 batch_size 2 with a 256-byte body: each output 128 bytes, dims 16', async () => {
    const answer = await postV1Infer(
      fx.url,
      'simple',
      SIMPLE_HEADER.replace('batch_size: 1', 'batch_size: 2'),
      simpleBody(2),
    );
    expect(answer.header.batch_size).toBe(2);
    expect(answer.header.output.map((o) => o.raw)).toEqual([
      { dims: [16], batch_byte_size: 128 },
      { dims: [16], batch_byte_size: 128 },
    ]);
    expect(int32sOf(answer.raw[0]!)).toEqual([...sum, ...sum]);
    expect(int32sOf(answer.raw[1]!)).toEqual([...difference, ...difference]);
  });

  it('V10 no NV-InferRequest: 400 with a plain-text body', async () => {
    const res = await fetch(`${fx.url}/api/infer/simple`, { method: 'POST', body: simpleBody() });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('missing NV-InferRequest header');
    expect(nvStatus(res).code).toBe('INVALID_ARG');
  });

  it('V11 an NV-InferRequest that is not text format: 400 INVALID_ARG saying where', async () => {
    const res = await fetch(`${fx.url}/api/infer/simple`, {
      method: 'POST',
      body: simpleBody(),
      headers: { 'NV-InferRequest': 'batch_size: 1 input { name: "INPUT0" ' },
    });
    expect(res.status).toBe(400);
    const status = nvStatus(res);
    expect(status.code).toBe('INVALID_ARG');
    expect(status.msg).toMatch(/^NV-InferRequest:1:\d+: expected '\}'/);
  });

  it('V12 cls { count: 3 }: no raw bytes for that output, batch_classes sorted by value', async () => {
    const header = SIMPLE_HEADER.replace('output { name: "OUTPUT0" }', 'output { name: "OUTPUT0" cls { count: 3 } }');
    const answer = await postV1Infer(fx.url, 'simple', header, simpleBody());
    expect(answer.header.output[0]).toEqual({
      name: 'OUTPUT0',
      batch_classes: [
        {
          cls: [
            { idx: 15, value: 16 },
            { idx: 14, value: 15 },
            { idx: 13, value: 14 },
          ],
        },
      ],
    });
    expect(answer.raw).toHaveLength(1);
    expect(int32sOf(answer.raw[0]!)).toEqual(difference);
    expect(answer.res.headers.get('nv-inferresponse')).toContain('batch_classes { cls { idx: 15 value: 16 } cls {');
  });

  it('V13 batch_size 9 on simple (max_batch_size 8): 400 INVALID_ARG', async () => {
    const res = await fetch(`${fx.url}/api/infer/simple`, {
      method: 'POST',
      body: simpleBody(9),
      headers: { 'NV-InferRequest': SIMPLE_HEADER.replace('batch_size: 1', 'batch_size: 9') },
    });
    expect(res.status).toBe(400);
    expect(nvStatus(res)).toMatchObject({
      code: 'INVALID_ARG',
      msg: "inference request batch-size must be <= 8 for 'simple'",
    });
  });
});

describe('model control', () => {
  it('V14 unload simple: SUCCESS, then version 1 is MODEL_UNAVAILABLE; load brings it back', async () => {
    const unload = await fetch(`${fx.url}/api/modelcontrol/unload/simple`, { method: 'POST' });
    expect(unload.status).toBe(200);
    expect(nvStatus(unload).code).toBe('SUCCESS');

    const after = await get('/api/status/simple?format=binary');
    expect(after.status).toBe(200);
    const status = decodeV1('ServerStatus', new Uint8Array(await after.arrayBuffer())) as unknown as ServerStatusMsg;
    expect(status.model_status.simple?.version_status?.['1']).toEqual({
      ready_state: 'MODEL_UNAVAILABLE',
      ready_state_reason: { message: 'unloaded' },
    });
    const refused = await fetch(`${fx.url}/api/infer/simple`, {
      method: 'POST',
      body: simpleBody(),
      headers: { 'NV-InferRequest': SIMPLE_HEADER },
    });
    expect(refused.status).toBe(400);
    expect(nvStatus(refused)).toMatchObject({
      code: 'UNAVAILABLE',
      msg: "Inference request for unknown model 'simple'",
    });

    const load = await fetch(`${fx.url}/api/modelcontrol/load/simple`, { method: 'POST' });
    expect(nvStatus(load).code).toBe('SUCCESS');
    const back = await get('/api/status/simple');
    expect(await back.text()).toContain('ready_state: MODEL_READY');
    expect(int32sOf((await postV1Infer(fx.url, 'simple', SIMPLE_HEADER, simpleBody())).raw[0]!)).toEqual(sum);
  });
});
