import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKey, createHarness, type Harness } from './harness.ts';

/**
 * Names and text a tenant sets are shown to others: an operator's `nvcf keys list`, the console, a shared
 * function's listing. Account B once named a key `\x1b]0;pwned\x07…` and the operator's terminal ran it. Every such
 * field refuses control characters and other non-printables with a 400 that names the field.
 */
let h: Harness;
let gw: RunningGateway;
let b: string;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...bearer(key), 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const refusal = async (res: Response) => {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  return (JSON.parse(text) as { detail: string }).detail;
};

/** What B tries to plant: an OSC title change and a bidi override, a line break, a C1 control, a lone surrogate. */
const HOSTILE = ['\x1b]0;pwned\x07', 'ok\u202egpj.exe', 'two\nlines', 'c1\x9bcontrol', 'half\ud800'];

/** A container function: another account may not name the operator's repository models. */
const containerFunction = (name: string, extra: object = {}) => ({
  name,
  inferenceUrl: '/echo',
  healthUri: '/health',
  containerImage: 'nvcf/echo-server:dev',
  ...extra,
});

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  b = await accountKey(gw.url, 'team-b', {
    name: 'bob',
    scopes: [
      'manage_keys',
      'invoke_function',
      'list_functions',
      'register_function',
      'update_function',
      'deploy_function',
    ],
  });
});
afterAll(async () => {
  await h?.close();
});

describe('tenant-set names and text refuse non-printable characters', () => {
  it('key names: 400 naming the field, and nothing stored', async () => {
    for (const name of HOSTILE) {
      const detail = await refusal(await call('POST', '/v2/nvcf/keys', b, { name, scopes: ['list_functions'] }));
      expect(detail).toMatch(/'name' must not contain control characters/);
    }
    const { keys } = (await (await call('GET', '/v2/nvcf/keys', b)).json()) as { keys: { name: string }[] };
    expect(keys.map((k) => k.name)).toEqual(['bob']);
    // A printable name in any script still goes through.
    const named = await call('POST', '/v2/nvcf/keys', b, { name: 'clé de Zoë 日本', scopes: ['list_functions'] });
    expect(named.status).toBe(201);
  });

  it('function description and tags, on create, new version and metadata update', async () => {
    for (const text of HOSTILE) {
      const described = await call('POST', '/v2/nvcf/functions', b, containerFunction('f', { description: text }));
      expect(await refusal(described)).toMatch(/'description' must not contain control characters/);
      const tagged = await call('POST', '/v2/nvcf/functions', b, containerFunction('f', { tags: ['ok', text] }));
      expect(await refusal(tagged)).toMatch(/'tags' must not contain control characters/);
    }
    const created = await call(
      'POST',
      '/v2/nvcf/functions',
      b,
      containerFunction('b-fn', { description: 'fine', tags: ['x'] }),
    );
    expect(created.status, await created.clone().text()).toBe(200);
    const { function: fn } = (await created.json()) as { function: { id: string; versionId: string } };
    const version = await call('POST', `/v2/nvcf/functions/${fn.id}/versions`, b, {
      ...containerFunction('b-fn'),
      description: HOSTILE[0],
    });
    expect(await refusal(version)).toMatch(/'description' must not/);
    const metadata = `/v2/nvcf/metadata/functions/${fn.id}/versions/${fn.versionId}`;
    expect(await refusal(await call('PUT', metadata, b, { description: HOSTILE[1] }))).toMatch(
      /'description' must not/,
    );
    expect(await refusal(await call('PUT', metadata, b, { tags: [HOSTILE[0]] }))).toMatch(/'tags' must not/);
    // Function names were already a strict pattern; it still refuses them.
    expect(await refusal(await call('POST', '/v2/nvcf/functions', b, containerFunction('x\x1by')))).toMatch(/'name'/);

    const { functions } = (await (await call('GET', '/v2/nvcf/functions', b)).json()) as {
      functions: { description: string; tags: string[] }[];
    };
    expect(functions.map((f) => [f.description, f.tags])).toEqual([['fine', ['x']]]);
  });

  it('asset descriptions', async () => {
    for (const description of HOSTILE) {
      const res = await call('POST', '/v2/nvcf/assets', b, { contentType: 'image/png', description });
      expect(await refusal(res)).toMatch(/'description' must not contain control characters/);
    }
    const fine = await call('POST', '/v2/nvcf/assets', b, { contentType: 'image/png', description: 'Zoë’s picture' });
    expect(fine.status, await fine.clone().text()).toBe(200);
  });

  it('deployment specifications: gpu, instanceType and backend', async () => {
    const created = await call('POST', '/v2/nvcf/functions', b, containerFunction('b-deploy'));
    expect(created.status, await created.clone().text()).toBe(200);
    const { function: fn } = (await created.json()) as { function: { id: string; versionId: string } };
    const path = `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`;
    const spec = { gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1 };
    for (const [field, value] of [
      ['gpu', `CPU${HOSTILE[0]}`],
      ['instanceType', `cpu.x1${HOSTILE[1]}`],
      ['backend', HOSTILE[2]],
    ] as const) {
      const detail = await refusal(
        await call('POST', path, b, { deploymentSpecifications: [{ ...spec, [field]: value }] }),
      );
      expect(detail).toMatch(new RegExp(`'${field}' must not contain control characters`));
    }
  });
});
