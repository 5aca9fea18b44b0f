import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFunctionModel, FUNCTION_MODEL } from '../access/function-model-fixture.ts';
import { parseRestrictedApis } from '../access/restricted-apis.ts';
import { nvStatus, SIMPLE_HEADER, simpleBody } from '../http-v1/v1-test-helpers.ts';
import { type KserveFixture, simpleJsonBody, startKserveFixture } from './kserve-test-fixture.ts';

const KEY = 'x-nvcf-worker-key';
const SECRET = 's3cret-value';
const DISABLED = 'explicit model load / unload is not allowed if polling is enabled';
const unknown = (m: string) => `Request for unknown model: '${m}' is not found`;

// Defaults: model control none, function models hidden. A second server restricts the repository and config APIs.
let open: KserveFixture;
let exposed: KserveFixture;
beforeAll(async () => {
  open = await startKserveFixture({ repositoryName: 'models' }, addFunctionModel);
  exposed = await startKserveFixture(
    {
      exposeFunctionModels: true,
      restrictedApis: parseRestrictedApis(`model-repository,model-config:${KEY}=${SECRET}`),
    },
    addFunctionModel,
  );
});
afterAll(async () => {
  await open?.close();
  await exposed?.close();
});

const post = (url: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body ?? '' });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
const indexNames = async (res: Response) => ((await res.json()) as { name: string }[]).map((e) => e.name);

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
    expect(nvStatus(res)).toMatchObject({ code: 'UNAVAILABLE', msg: DISABLED });
    expect(open.core.isModelReady('simple')).toBe(true);
  });
});

describe('NVCF function models', () => {
  it('are unknown to every public surface while hidden, though the core serves them', async () => {
    expect(open.core.isModelReady(FUNCTION_MODEL)).toBe(true);
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
      headers: { 'NV-InferRequest': SIMPLE_HEADER },
      body: simpleBody(),
    });
    expect(nvStatus(v1).code).toBe('UNAVAILABLE');
  });

  it('are served on the surfaces with exposeFunctionModels', async () => {
    const infer = await post(`${exposed.url}/v2/models/${FUNCTION_MODEL}/infer`, simpleJsonBody());
    expect(infer.status).toBe(200);
    expect((await fetch(`${exposed.url}/v2/models/${FUNCTION_MODEL}`)).status).toBe(200);
    const index = await post(`${exposed.url}/v2/repository/index`, '', { [KEY]: SECRET });
    expect(await indexNames(index)).toContain(FUNCTION_MODEL);
  });
});

describe('restricted APIs', () => {
  it('answers 403 with Triton’s wording without the header or with a wrong value', async () => {
    const message = `This API is restricted, expecting header '${KEY}'`;
    const attempts: Record<string, string>[] = [{}, { [KEY]: 'wrong' }, { [KEY]: `${SECRET}x` }];
    for (const headers of attempts) {
      const index = await post(`${exposed.url}/v2/repository/index`, '', headers);
      expect([index.status, await errorOf(index)]).toEqual([403, message]);
      const config = await fetch(`${exposed.url}/v2/models/simple/config`, { headers });
      expect([config.status, await errorOf(config)]).toEqual([403, message]);
      const trailing = await fetch(`${exposed.url}/v2/models/simple/versions/1/config/`, { headers });
      expect(trailing.status).toBe(403);
    }
    // Model control is still `none` behind the restriction: the header opens the API, not load/unload.
    const unload = await post(`${exposed.url}/v2/repository/models/simple/unload`);
    expect([unload.status, await errorOf(unload)]).toEqual([403, message]);
    const allowed = await post(`${exposed.url}/v2/repository/models/simple/unload`, '', { [KEY]: SECRET });
    expect([allowed.status, await errorOf(allowed)]).toEqual([503, DISABLED]);
  });

  it('lets the header through, and leaves other groups open', async () => {
    const headers = { [KEY]: SECRET };
    expect((await post(`${exposed.url}/v2/repository/index`, '', headers)).status).toBe(200);
    expect((await fetch(`${exposed.url}/v2/models/simple/config`, { headers })).status).toBe(200);
    expect((await post(`${exposed.url}/v2/models/simple/infer`, simpleJsonBody())).status).toBe(200);
    expect((await fetch(`${exposed.url}/v2/models/simple`)).status).toBe(200);
    expect((await fetch(`${exposed.url}/v2/health/ready`)).status).toBe(200);
  });

  it('covers the v1 routes of the same groups, answered in v1’s shape', async () => {
    const index = await post(`${exposed.url}/api/repository/index`);
    expect(index.status).toBe(400);
    expect(nvStatus(index).msg).toBe(`This API is restricted, expecting header '${KEY}'`);
    expect(nvStatus(await fetch(`${exposed.url}/api/status`)).msg).toMatch(/^This API is restricted/);
    expect((await post(`${exposed.url}/api/repository/index`, '', { [KEY]: SECRET })).status).toBe(200);
    expect((await fetch(`${exposed.url}/api/health/live`)).status).toBe(200);
  });
});
