import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, simpleJsonBody, startKserveFixture } from './kserve-test-fixture.ts';

// Its own repository and core: these tests unload and reload models.
let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({ repositoryName: 'models' });
});
afterAll(async () => {
  await fx?.close();
});

interface IndexEntry {
  name: string;
  version?: string;
  state: string;
  reason: string;
}

const post = (path: string, body?: unknown) =>
  fetch(`${fx.url}${path}`, {
    method: 'POST',
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
const index = async (body?: unknown): Promise<IndexEntry[]> => {
  const res = await post('/v2/repository/index', body);
  expect(res.status).toBe(200);
  return (await res.json()) as IndexEntry[];
};
const status = async (path: string) => (await fetch(`${fx.url}${path}`)).status;
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
const inferSimple = () => post('/v2/models/simple/infer', simpleJsonBody());
const simpleConfig = async () =>
  (await (await fetch(`${fx.url}/v2/models/simple/config`)).json()) as { max_batch_size: number; name: string };

describe('repository index', () => {
  it('lists every model with version, state and reason; {"ready":true} keeps the ready ones', async () => {
    const all = await index();
    expect(all).toContainEqual({ name: 'simple', version: '1', state: 'READY', reason: '' });
    expect(all.map((e) => e.name)).toEqual(
      expect.arrayContaining(['classifier', 'identity_bytes', 'classifier_unlabeled']),
    );
    expect(await index({ ready: true })).toEqual(all.filter((e) => e.state === 'READY'));
    expect(await index({})).toEqual(all);
    expect(await index({ ready: false })).toEqual(all);
  });

  it('refuses a malformed index body', async () => {
    for (const body of ['{"ready":"yes"}', '{not json', '[1]', '42']) {
      const res = await post('/v2/repository/index', body);
      expect(res.status, body).toBe(400);
      expect(await errorOf(res)).toBeTruthy();
    }
  });

  it('answers the named repository routes for the configured name only', async () => {
    const named = await post('/v2/repository/models/index');
    expect(named.status).toBe(200);
    expect(await named.json()).toEqual(await index());
    const other = await post('/v2/repository/elsewhere/index');
    expect(other.status).toBe(400);
    expect(await errorOf(other)).toBe("Request for unknown repository: 'elsewhere'");
    expect((await post('/v2/repository/elsewhere/models/simple/unload')).status).toBe(400);
    expect(await status('/v2/models/simple/ready')).toBe(200);
  });
});

describe('unload and load', () => {
  it('unload makes the model unknown; load brings it back', async () => {
    const unload = await post('/v2/repository/models/simple/unload');
    expect(unload.status).toBe(200);
    expect(await unload.text()).toBe('');
    expect(await status('/v2/models/simple/ready')).toBe(400);
    const infer = await inferSimple();
    expect(infer.status).toBe(400);
    expect(await errorOf(infer)).toBe("Request for unknown model: 'simple' is not found");
    expect(await index()).toContainEqual({ name: 'simple', state: 'UNAVAILABLE', reason: 'unloaded' });
    expect((await index({ ready: true })).some((e) => e.name === 'simple')).toBe(false);

    const load = await post('/v2/repository/models/simple/load');
    expect(load.status).toBe(200);
    expect(await load.text()).toBe('');
    expect(await status('/v2/models/simple/ready')).toBe(200);
    expect((await inferSimple()).status).toBe(200);
    expect(await index()).toContainEqual({ name: 'simple', version: '1', state: 'READY', reason: '' });
  });

  it('takes unload_dependents and the named repository form', async () => {
    expect(
      (await post('/v2/repository/models/models/identity_int8/unload', { parameters: { unload_dependents: true } }))
        .status,
    ).toBe(200);
    expect(await status('/v2/models/identity_int8/ready')).toBe(400);
    expect((await post('/v2/repository/models/models/identity_int8/load', {})).status).toBe(200);
    expect(await status('/v2/models/identity_int8/ready')).toBe(200);
    const bad = await post('/v2/repository/models/identity_int8/unload', { parameters: { unload_dependents: 'yes' } });
    expect(bad.status).toBe(400);
  });

  it('reloads with a config override, which the config endpoint then shows', async () => {
    expect((await simpleConfig()).max_batch_size).toBe(8);
    const res = await post('/v2/repository/models/simple/load', {
      parameters: { config: JSON.stringify({ max_batch_size: '16' }) },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await simpleConfig()).max_batch_size).toBe(16);
    // A batch of 12 was over the old limit of 8.
    const rows = 12;
    const body = JSON.stringify({
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({
        name,
        datatype: 'INT32',
        shape: [rows, 16],
        data: new Array(rows * 16).fill(2),
      })),
    });
    const infer = await post('/v2/models/simple/infer', body);
    expect(infer.status).toBe(200);
    // Loading without an override goes back to config.pbtxt.
    expect((await post('/v2/repository/models/simple/load')).status).toBe(200);
    expect((await simpleConfig()).max_batch_size).toBe(8);
  });

  it('refuses a bad config override with 400 "Invalid config override" and keeps serving', async () => {
    for (const config of ['{not json', '[]', JSON.stringify({ max_batch_size: 'many' })]) {
      const res = await post('/v2/repository/models/simple/load', { parameters: { config } });
      expect(res.status, config).toBe(400);
      expect(await errorOf(res), config).toMatch(/^Invalid config override/);
      expect((await inferSimple()).status).toBe(200);
    }
    const notString = await post('/v2/repository/models/simple/load', {
      parameters: { config: { max_batch_size: 4 } },
    });
    expect(notString.status).toBe(400);
    expect(await errorOf(notString)).toMatch(/^Invalid config override/);
    // A failed reload leaves the previous config serving; a plain load is still accepted.
    expect((await post('/v2/repository/models/simple/load')).status).toBe(200);
    expect((await fetch(`${fx.url}/v2/health/ready`)).status).toBe(200);
  });

  it('refuses unknown and file: load parameters and malformed bodies with 400', async () => {
    const unknown = await post('/v2/repository/models/simple/load', { parameters: { colour: 'blue' } });
    expect(unknown.status).toBe(400);
    expect(await errorOf(unknown)).toBe("Unrecognized load parameter 'colour'");
    const file = await post('/v2/repository/models/simple/load', { parameters: { 'file:1/model.onnx': 'AAAA' } });
    expect(file.status).toBe(400);
    expect(await errorOf(file)).toContain('not supported');
    for (const body of ['{not json', '[]', '{"parameters":[1]}', '{"parameters":"x"}']) {
      const res = await post('/v2/repository/models/simple/load', body);
      expect(res.status, body).toBe(400);
    }
    expect(await status('/v2/models/simple/ready')).toBe(200);
  });

  it('reports a model the repository does not hold as failed to load', async () => {
    const res = await post('/v2/repository/models/ghost/load');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await errorOf(res)).toMatch(/^failed to load 'ghost'/);
  });
});
