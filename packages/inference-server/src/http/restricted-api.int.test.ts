import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRestrictedApis } from '../access/restricted-apis.ts';
import { nvStatus } from '../http-v1/v1-test-helpers.ts';
import { type KserveFixture, simpleJsonBody, startKserveFixture } from './kserve-test-fixture.ts';

const KEY = 'x-admin-key';
const SECRET = 's3cret-value';

// Triton's --http-restricted-api: the repository and config groups need a header; every other group is open.
let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({
    repositoryName: 'models',
    restrictedApis: parseRestrictedApis(`model-repository,model-config:${KEY}=${SECRET}`),
  });
});
afterAll(async () => {
  await fx?.close();
});

const post = (url: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body ?? '' });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

describe('restricted APIs', () => {
  it('answers 403 with Triton’s wording without the header or with a wrong value', async () => {
    const message = `This API is restricted, expecting header '${KEY}'`;
    const attempts: Record<string, string>[] = [{}, { [KEY]: 'wrong' }, { [KEY]: `${SECRET}x` }];
    for (const headers of attempts) {
      const index = await post(`${fx.url}/v2/repository/index`, '', headers);
      expect([index.status, await errorOf(index)]).toEqual([403, message]);
      const config = await fetch(`${fx.url}/v2/models/simple/config`, { headers });
      expect([config.status, await errorOf(config)]).toEqual([403, message]);
      const trailing = await fetch(`${fx.url}/v2/models/simple/versions/1/config/`, { headers });
      expect(trailing.status).toBe(403);
      const unload = await post(`${fx.url}/v2/repository/models/simple/unload`, '', headers);
      expect([unload.status, await errorOf(unload)]).toEqual([403, message]);
    }
    expect(fx.core.isModelReady('simple')).toBe(true);
  });

  it('lets the header through, and leaves other groups open', async () => {
    const headers = { [KEY]: SECRET };
    expect((await post(`${fx.url}/v2/repository/index`, '', headers)).status).toBe(200);
    expect((await fetch(`${fx.url}/v2/models/simple/config`, { headers })).status).toBe(200);
    expect((await post(`${fx.url}/v2/models/simple/infer`, simpleJsonBody())).status).toBe(200);
    expect((await fetch(`${fx.url}/v2/models/simple`)).status).toBe(200);
    expect((await fetch(`${fx.url}/v2/health/ready`)).status).toBe(200);
    // Past the restriction, a repository call reaches the core: this one reloads the model.
    expect((await post(`${fx.url}/v2/repository/models/simple/load`, '', headers)).status).toBe(200);
    expect(fx.core.isModelReady('simple')).toBe(true);
  });

  it('covers the v1 routes of the same groups, answered in v1’s shape', async () => {
    const index = await post(`${fx.url}/api/repository/index`);
    expect(index.status).toBe(400);
    expect(nvStatus(index).msg).toBe(`This API is restricted, expecting header '${KEY}'`);
    expect(nvStatus(await fetch(`${fx.url}/api/status`)).msg).toMatch(/^This API is restricted/);
    expect((await post(`${fx.url}/api/repository/index`, '', { [KEY]: SECRET })).status).toBe(200);
    expect((await fetch(`${fx.url}/api/health/live`)).status).toBe(200);
  });
});
