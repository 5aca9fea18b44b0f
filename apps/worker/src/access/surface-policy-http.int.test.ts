import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_MODEL } from './function-model-fixture.ts';
import { type ServedSurfaces, type SurfacesFixture, startSurfacesFixture } from './surfaces-fixture.ts';

const KEY = 'x-nvcf-worker-key';
const SECRET = 's3cret-value';
const DISABLED = 'explicit model load / unload is not allowed if polling is enabled';
const unknown = (m: string) => `Request for unknown model: '${m}' is not found`;

// The worker's defaults: model control none, function models hidden. The second set of surfaces, over the same
// core, exposes function models and restricts the repository and config APIs.
let fx: SurfacesFixture;
let open: ServedSurfaces;
let exposed: ServedSurfaces;
beforeAll(async () => {
  fx = await startSurfacesFixture('http');
  open = await fx.serve();
  exposed = await fx.serve({
    WORKER_EXPOSE_FUNCTION_MODELS: 'true',
    WORKER_RESTRICTED_API: `model-repository,model-config:${KEY}=${SECRET}`,
  });
});
afterAll(async () => {
  await fx?.close();
});

const post = (url: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body ?? '' });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
const indexNames = async (res: Response) => ((await res.json()) as { name: string }[]).map((e) => e.name);

/** Code and message of v1's `NV-Status` (protobuf text format; the messages read here have nothing escaped). */
function nvStatus(res: Response): { code: string | undefined; msg: string | undefined } {
  const text = res.headers.get('nv-status');
  if (text === null) throw new Error(`${res.url}: no NV-Status header`);
  return { code: /\bcode: (\w+)/.exec(text)?.[1], msg: /\bmsg: "([^"]*)"/.exec(text)?.[1] };
}

/** Triton's `simple` request: INPUT0 = 0..15, INPUT1 = ones. */
const simpleInputs = () => ({
  input0: Int32Array.from({ length: 16 }, (_, i) => i),
  input1: new Int32Array(16).fill(1),
});
const simpleJsonBody = () => {
  const { input0, input1 } = simpleInputs();
  return JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [...input0] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: [...input1] },
    ],
  });
};
/** The same request as v1 sends it: raw INT32 little-endian, INPUT0 then INPUT1, described by NV-InferRequest. */
const V1_SIMPLE_HEADER =
  'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT0" } output { name: "OUTPUT1" }';
const v1SimpleBody = () => {
  const { input0, input1 } = simpleInputs();
  return Buffer.concat([Buffer.from(input0.buffer), Buffer.from(input1.buffer)]);
};

describe('model control mode none (the default)', () => {
  it('refuses KServe load and unload with Triton’s UNAVAILABLE and wording; the model keeps serving', async () => {
    for (const path of [
      '/v2/repository/models/simple/unload',
      '/v2/repository/models/simple/load',
      '/v2/repository/models/models/simple/unload',
    ]) {
      const res = await post(`${open.url}${path}`);
      expect([res.status, await errorOf(res)], path).toEqual([503, DISABLED]);
    }
    expect((await fetch(`${open.url}/v2/models/simple/ready`)).status).toBe(200);
    expect((await post(`${open.url}/v2/repository/index`)).status).toBe(200);
  });

  it('refuses v1 model control with the same code and words in NV-Status', async () => {
    const res = await post(`${open.url}/api/modelcontrol/unload/simple`);
    expect(res.status).toBe(400);
    expect(nvStatus(res)).toEqual({ code: 'UNAVAILABLE', msg: DISABLED });
    expect(fx.core.isModelReady('simple')).toBe(true);
  });
});

describe('NVCF function models', () => {
  it('are unknown to every public surface while hidden, though the core serves them', async () => {
    expect(fx.core.isModelReady(FUNCTION_MODEL)).toBe(true);
    const infer = await post(`${open.url}/v2/models/${FUNCTION_MODEL}/infer`, simpleJsonBody());
    expect([infer.status, await errorOf(infer)]).toEqual([400, unknown(FUNCTION_MODEL)]);
    for (const suffix of ['', '/config', '/stats', '/versions/1']) {
      const res = await fetch(`${open.url}/v2/models/${FUNCTION_MODEL}${suffix}`);
      expect([res.status, await errorOf(res)], suffix).toEqual([400, unknown(FUNCTION_MODEL)]);
    }
    expect((await fetch(`${open.url}/v2/models/${FUNCTION_MODEL}/ready`)).status).toBe(400);
    expect(await indexNames(await post(`${open.url}/v2/repository/index`))).not.toContain(FUNCTION_MODEL);
    const stats = (await (await fetch(`${open.url}/v2/models/stats`)).json()) as { model_stats: { name: string }[] };
    expect(stats.model_stats.map((s) => s.name)).toContain('simple');
    expect(stats.model_stats.map((s) => s.name)).not.toContain(FUNCTION_MODEL);

    // Triton v1: status, repository index and infer.
    const status = await (await fetch(`${open.url}/api/status`)).text();
    expect(status).toContain('simple');
    expect(status).not.toContain(FUNCTION_MODEL);
    expect(nvStatus(await fetch(`${open.url}/api/status/${FUNCTION_MODEL}`)).code).toBe('NOT_FOUND');
    expect(await (await post(`${open.url}/api/repository/index`)).text()).not.toContain(FUNCTION_MODEL);
    const v1 = await fetch(`${open.url}/api/infer/${FUNCTION_MODEL}`, {
      method: 'POST',
      headers: { 'NV-InferRequest': V1_SIMPLE_HEADER },
      body: v1SimpleBody(),
    });
    expect(nvStatus(v1).code).toBe('UNAVAILABLE');
  });

  it('are served on the surfaces with WORKER_EXPOSE_FUNCTION_MODELS', async () => {
    const infer = await post(`${exposed.url}/v2/models/${FUNCTION_MODEL}/infer`, simpleJsonBody());
    expect(infer.status).toBe(200);
    expect((await fetch(`${exposed.url}/v2/models/${FUNCTION_MODEL}`)).status).toBe(200);
    const index = await post(`${exposed.url}/v2/repository/index`, '', { [KEY]: SECRET });
    expect(await indexNames(index)).toContain(FUNCTION_MODEL);
  });
});

describe('restricted APIs in front of model control', () => {
  it('answers 403 without the header, and with it still refuses load/unload (model control none)', async () => {
    const unload = await post(`${exposed.url}/v2/repository/models/simple/unload`);
    expect([unload.status, await errorOf(unload)]).toEqual([403, `This API is restricted, expecting header '${KEY}'`]);
    const allowed = await post(`${exposed.url}/v2/repository/models/simple/unload`, '', { [KEY]: SECRET });
    expect([allowed.status, await errorOf(allowed)]).toEqual([503, DISABLED]);
    expect(fx.core.isModelReady('simple')).toBe(true);
  });
});
