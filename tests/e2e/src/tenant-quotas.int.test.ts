import type { FunctionVersion } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type Harness } from './harness.ts';

/**
 * No account can starve the others (issue: fifty 1 MB container functions took Redis from 6 to 186 MB and every
 * account's `GET /v2/nvcf/functions` to 4.6 s, then 503; 300 keys were minted freely). Another account's admin
 * (team-b) hits each quota — functions per account, versions per function, API keys per account — and is refused
 * while the operator's account still creates; oversize fields are a 400 naming the field; a container's environment
 * is stored once; and one account's listing reads only its own functions and those shared with it.
 */
const QUOTA = { functions: 3, versions: 2, keys: 3 };

let h: Harness;
let gw: RunningGateway;
let b: string;
let keys: ReturnType<typeof createKeys>;

interface Fn {
  id: string;
  versionId: string;
  ncaId: string;
  containerImage?: string;
  containerArgs?: string;
  containerEnvironment?: { key: string; value: string }[];
}
interface Problem {
  status: number;
  title: string;
  detail: string;
}

const call = (method: string, path: string, key: string, body?: unknown, base = gw.url) =>
  fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const json = async <T>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};
const problem = async (res: Response, status: number): Promise<Problem> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return JSON.parse(text) as Problem;
};

const container = (name: string, extra: object = {}) => ({
  name,
  inferenceUrl: '/echo',
  containerImage: 'registry.example/echo:1',
  containerArgs: 'node server.js',
  ...extra,
});
const createFn = (key: string, body: object, functionId?: string) =>
  call('POST', functionId ? `/v2/nvcf/functions/${functionId}/versions` : '/v2/nvcf/functions', key, body);
const created = async (key: string, body: object, functionId?: string) =>
  (await json<{ function: Fn }>(await createFn(key, body, functionId))).function;
const listed = async (key: string, base = gw.url) =>
  (await json<{ functions: Fn[] }>(await call('GET', '/v2/nvcf/functions', key, undefined, base))).functions;

const ADMIN_SCOPES = [
  'list_functions',
  'register_function',
  'update_function',
  'delete_function',
  'authorize_clients',
  'manage_keys',
];
/** A key of `ncaId`, made by `as` (the operator makes an account's first key). */
const mintKey = (ncaId: string, name: string, as = ADMIN_KEY) =>
  call('POST', '/v2/nvcf/keys', as, { name, scopes: ADMIN_SCOPES, ncaId });
const minted = async (ncaId: string, name: string, as = ADMIN_KEY) =>
  (await json<{ key: { id: string }; value: string }>(await mintKey(ncaId, name, as), 201)).value;

beforeAll(async () => {
  h = await createHarness();
  keys = createKeys(h.keyPrefix);
  gw = await h.gateway({
    FUNCTION_QUOTA_COUNT: String(QUOTA.functions),
    FUNCTION_VERSION_QUOTA_COUNT: String(QUOTA.versions),
    API_KEY_QUOTA_COUNT: String(QUOTA.keys),
  });
  b = await minted('team-b', 'bob-admin');
});
afterAll(async () => {
  await h?.close();
});

describe('per-account quotas (403 PERMISSION_DENIED, as the asset quota answers)', () => {
  it('functions per account: team-b is refused past its quota, the operator still creates, a delete frees room', async () => {
    const mine: Fn[] = [];
    for (let i = 0; i < QUOTA.functions; i++) mine.push(await created(b, container(`b-fn-${i}`)));
    const refused = await problem(await createFn(b, container('b-fn-over')), 403);
    expect(refused.detail).toMatch(/function quota.*3 functions/);
    expect((await listed(b)).length).toBe(QUOTA.functions);
    // Another account is not starved by team-b's functions.
    expect((await created(ADMIN_KEY, container('op-fn'))).ncaId).toBe('self-hosted');
    const [first] = mine;
    expect((await call('DELETE', `/v2/nvcf/functions/${first?.id}/versions/${first?.versionId}`, b)).status).toBe(204);
    await created(b, container('b-fn-again'));
    await problem(await createFn(b, container('b-fn-over-again')), 403);
  });

  it('versions per function: a new version past the quota is refused; the operator’s function still takes one', async () => {
    const [fn] = await listed(b);
    if (!fn) throw new Error('team-b has no function');
    for (let n = (await listed(b)).filter((f) => f.id === fn.id).length; n < QUOTA.versions; n++) {
      await created(b, container('b-fn-version'), fn.id);
    }
    const refused = await problem(await createFn(b, container('b-fn-version'), fn.id), 403);
    expect(refused.detail).toMatch(/version quota.*2 versions/);
    const op = (await listed(ADMIN_KEY)).find((f) => f.ncaId === 'self-hosted');
    expect((await created(ADMIN_KEY, container('op-fn-v2'), op?.id)).id).toBe(op?.id);
  });

  it('concurrent creates do not overshoot the function quota', async () => {
    const c = await minted('team-c', 'carol-admin');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createFn(c, container(`c-fn-${i}`)).then((r) => r.status)),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(QUOTA.functions);
    expect(answers.filter((s) => s === 403)).toHaveLength(8 - QUOTA.functions);
    expect(await h.redis.scard(keys.accountFunctions('team-c'))).toBe(QUOTA.functions);
  });

  it('API keys per account: team-b’s admin is refused past the quota, the operator still mints, a revoke frees room', async () => {
    // bob-admin is team-b's first.
    const ids: string[] = [];
    for (let i = 1; i < QUOTA.keys; i++) {
      const res = await json<{ key: { id: string } }>(await mintKey('team-b', `b-key-${i}`, b), 201);
      ids.push(res.key.id);
    }
    const refused = await problem(await mintKey('team-b', 'b-key-over', b), 403);
    expect(refused.detail).toMatch(/API key quota.*3 live keys/);
    // The operator minting for team-b counts against team-b, not against the operator.
    await problem(await mintKey('team-b', 'b-key-by-operator'), 403);
    await minted('self-hosted', 'op-key');
    expect((await call('DELETE', `/v2/nvcf/keys/${ids[0]}`, b)).status).toBe(204);
    await minted('team-b', 'b-key-after-revoke', b);
  });
});

describe('field sizes: a 400 naming the field', () => {
  const env = (n: number, size: number) =>
    Array.from({ length: n }, (_, i) => ({ key: `VAR_${i}`, value: 'x'.repeat(size) }));
  const cases: [field: string, body: object][] = [
    ['containerArgs', container('too-big', { containerArgs: 'a'.repeat(8193) })],
    ['containerEnvironment', container('too-big', { containerEnvironment: env(1, 16 * 1024 + 1) })],
    ['containerEnvironment', container('too-big', { containerEnvironment: [{ key: 'K'.repeat(257), value: '' }] })],
    ['containerEnvironment', container('too-big', { containerEnvironment: env(257, 1) })],
    ['containerEnvironment', container('too-big', { containerEnvironment: env(8, 9 * 1024) })],
    ['containerImage', container('too-big', { containerImage: `r/${'i'.repeat(1024)}` })],
    ['inferenceUrl', container('too-big', { inferenceUrl: `/${'p'.repeat(2048)}` })],
    ['healthUri', container('too-big', { healthUri: `/${'p'.repeat(2048)}` })],
    ['description', container('too-big', { description: 'd'.repeat(1025) })],
    ['tags', container('too-big', { tags: Array.from({ length: 65 }, (_, i) => `t${i}`) })],
    ['name', container('n'.repeat(129))],
    [
      'models',
      {
        name: 'too-many-models',
        inferenceUrl: '/v2/models/simple/infer',
        models: Array.from({ length: 33 }, () => ({
          name: 'simple',
          version: '1',
          uri: 'model-repository://simple/1',
        })),
      },
    ],
    [
      'models',
      {
        name: 'long-model-uri',
        inferenceUrl: '/v2/models/simple/infer',
        models: [{ name: 'simple', version: '1', uri: `asset://${'a'.repeat(2048)}` }],
      },
    ],
    ['notAKnownField', container('too-big', { notAKnownField: 'z'.repeat(17 * 1024) })],
  ];
  it.each(cases)("'%s' past a limit", async (field, body) => {
    const refused = await problem(await createFn(b, body), 400);
    expect(refused.detail).toContain(`'${field}'`);
  });
});

describe('a container spec is stored once', () => {
  it('its environment appears once in the stored version, and the DTO still gives it back', async () => {
    const d = await minted('team-d', 'dave-admin');
    const marker = (i: number) => `M${i}-${'e'.repeat(1000)}`;
    const environment = Array.from({ length: 40 }, (_, i) => ({ key: `VAR_${i}`, value: marker(i) }));
    const fn = await created(d, container('big-env', { containerEnvironment: environment }));
    const stored = (await h.redis.hget(keys.functionVersions(fn.id), fn.versionId)) ?? '';
    for (let i = 0; i < environment.length; i++) expect(stored.split(marker(i)).length - 1).toBe(1);
    const envBytes = JSON.stringify(environment).length;
    expect(stored.length).toBeLessThan(envBytes * 1.2);
    const read = await json<{ function: Fn }>(
      await call('GET', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`, d),
    );
    expect(read.function).toMatchObject({
      containerImage: 'registry.example/echo:1',
      containerArgs: 'node server.js',
      containerEnvironment: environment,
    });
  });

  it('a version the previous release stored (environment twice, no account index) is read and listed', async () => {
    const e = await minted('team-e', 'erin-admin');
    const fid = crypto.randomUUID();
    const vid = crypto.randomUUID();
    const environment = [{ key: 'GREETING', value: 'hello' }];
    const legacy: FunctionVersion = {
      id: fid,
      versionId: vid,
      name: 'legacy-fn',
      ncaId: 'team-e',
      createdAt: new Date().toISOString(),
      description: '',
      functionType: 'DEFAULT',
      apiBodyFormat: 'CUSTOM',
      inferenceUrl: '/echo',
      models: [],
      tags: [],
      spec: { containerImage: 'registry.example/legacy:1', containerArgs: 'run', containerEnvironment: environment },
      deployment: null,
      container: {
        image: 'registry.example/legacy:1',
        args: 'run',
        environment,
        health: { uri: '/v2/health/ready', timeoutMs: 10_000, expectedStatusCode: 200 },
      },
    };
    // As the previous release wrote it: the function's hash and the set of every function, nothing per account.
    await h.redis.sadd(keys.functionIds, fid);
    await h.redis.hset(keys.functionVersions(fid), vid, JSON.stringify(legacy));
    const read = await json<{ function: Fn }>(await call('GET', `/v2/nvcf/functions/${fid}/versions/${vid}`, e));
    expect(read.function).toMatchObject({ containerArgs: 'run', containerEnvironment: environment });
    // A gateway that starts indexes what an older one stored.
    const next = await h.gateway();
    expect((await listed(e, next.url)).map((f) => f.versionId)).toEqual([vid]);
    expect(await h.redis.sismember(keys.accountFunctions('team-e'), fid)).toBe(1);
  });
});

describe('listing reads only the caller’s functions', () => {
  it('team-f’s GET /v2/nvcf/functions touches its own and shared functions’ keys, no other account’s', async () => {
    const f = await minted('team-f', 'fay-admin');
    const own = await created(f, container('f-own'));
    const shared = await created(ADMIN_KEY, container('op-shared'));
    const sharing = `/v2/nvcf/authorizations/functions/${shared.id}`;
    await json(await call('POST', sharing, ADMIN_KEY, { authorizedParties: [{ ncaId: 'team-f' }] }));
    const monitor = await new Redis(h.redisUrl).monitor();
    const commands: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(args.map(String)));
    try {
      const seen = await listed(f);
      expect(seen.map((fn) => fn.id).sort()).toEqual([own.id, shared.id].sort());
      // MONITOR's copies can reach this client after the answer did: a marker sent after it comes after them.
      const marker = `listing-done-${crypto.randomUUID()}`;
      await h.redis.echo(marker);
      await expect.poll(() => commands.some((c) => c.includes(marker)), { timeout: 10_000 }).toBe(true);
    } finally {
      monitor.disconnect();
    }
    const everyFunction = await h.redis.smembers(keys.functionIds);
    const others = everyFunction.filter((id) => id !== own.id && id !== shared.id);
    expect(others.length).toBeGreaterThan(5);
    const touched = commands.filter((c) => others.some((id) => c.some((arg) => arg.includes(id))));
    expect(touched).toEqual([]);
    // Nor the set of every function.
    expect(commands.filter((c) => c.includes(keys.functionIds))).toEqual([]);
    // Unshared, it is gone from team-f's listing at once; shared again with one version, it is back.
    await json(await call('PATCH', `${sharing}/remove`, ADMIN_KEY, { authorizedParty: { ncaId: 'team-f' } }));
    expect((await listed(f)).map((fn) => fn.id)).toEqual([own.id]);
    const versionSharing = `${sharing}/versions/${shared.versionId}`;
    await json(await call('POST', versionSharing, ADMIN_KEY, { authorizedParties: [{ ncaId: 'team-f' }] }));
    expect((await listed(f)).map((fn) => fn.id).sort()).toEqual([own.id, shared.id].sort());
    await json(await call('DELETE', versionSharing, ADMIN_KEY));
    expect((await listed(f)).map((fn) => fn.id)).toEqual([own.id]);
  });
});
