import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { SCOPES } from '@nvcf/protocol';
import { createKeys } from '@nvcf/queue';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, simpleRequest } from './harness.ts';

const JWT_SECRET = 'a-keys-api-test-secret-of-at-least-32-characters';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  // No auth cache here: a revocation shows at once (the cache bound has its own test below).
  gw = await h.gateway({ AUTH_CACHE_MS: '0', NVCF_JWT_SECRET: JWT_SECRET });
});
afterAll(async () => {
  await h?.close();
});

interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  functionIds?: string[];
  ncaId: string;
  createdAt: string;
  revokedAt?: string;
}
interface Problem {
  status: number;
  title: string;
  detail: string;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (method: string, path: string, key: string, body?: unknown, base = gw.url) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...bearer(key), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
const problemOf = async (res: Response) => {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as Problem;
};
/** Creates a key (201 expected) and returns it with its secret. */
async function create(body: object, as = ADMIN_KEY): Promise<{ key: ApiKey; value: string }> {
  const res = await call('POST', '/v2/nvcf/keys', as, body);
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return (await res.json()) as { key: ApiKey; value: string };
}
const list = async (as = ADMIN_KEY) => {
  const res = await call('GET', '/v2/nvcf/keys', as);
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: ApiKey[] }).keys;
};
const invoke = (fn: string, key: string, base = gw.url) =>
  call('POST', `/v2/nvcf/pexec/functions/${fnId(fn)}`, key, simpleRequest(), base);
const listFunctions = (key: string, base = gw.url) => call('GET', '/v2/nvcf/functions', key, undefined, base);

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a key made over HTTP', () => {
  it('works for what its scopes and functions allow, is listed, and gets 401 once revoked', async () => {
    const res = await call('POST', '/v2/nvcf/keys', ADMIN_KEY, {
      name: 'ci',
      scopes: ['invoke_function', 'list_functions'],
      functionIds: [fnId('simple').toUpperCase()],
    });
    expect(res.status).toBe(201);
    // The secret is in this answer only: no cache on the way may keep it.
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { key, value } = (await res.json()) as { key: ApiKey; value: string };
    expect(value).toMatch(/^nvapi-[A-Za-z0-9_-]{43}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'ci',
      scopes: ['invoke_function', 'list_functions'],
      functionIds: [fnId('simple')],
      // The caller's account: the bootstrap admin's is the gateway's own (NVCF_NCA_ID).
      ncaId: 'self-hosted',
      createdAt: expect.any(String),
    });

    expect((await invoke('simple', value)).status).toBe(200);
    expect((await invoke('classifier', value)).status).toBe(403);
    const fns = (await (await listFunctions(value)).json()) as { functions: { name: string }[] };
    expect(fns.functions.map((f) => f.name)).toEqual(['simple']);
    const noManage = await call('GET', '/v2/nvcf/keys', value);
    expect(noManage.status).toBe(403);
    expect((await problemOf(noManage)).detail).toMatch(/manage_keys/);
    const noDeploy = await call('DELETE', `/v2/nvcf/deployments/functions/${fnId('simple')}/versions/x`, value);
    expect(noDeploy.status).toBe(403);

    const listed = await list();
    expect(listed.find((k) => k.id === key.id)).toEqual(key);
    // Oldest first: the bootstrap admin key came before it.
    expect(listed.map((k) => k.name).indexOf('bootstrap-admin')).toBeLessThan(listed.findIndex((k) => k.id === key.id));
    expect(listed.map((k) => k.createdAt)).toEqual(listed.map((k) => k.createdAt).sort());
    expect(JSON.stringify(listed)).not.toContain(value);

    const revoked = await call('DELETE', `/v2/nvcf/keys/${key.id}`, ADMIN_KEY);
    expect(revoked.status).toBe(204);
    expect(await revoked.text()).toBe('');
    const refused = await invoke('simple', value);
    expect(refused.status).toBe(401);
    expect((await problemOf(refused)).detail).toBe('client is unauthorized');
    const after = (await list()).find((k) => k.id === key.id);
    expect(after?.revokedAt).toEqual(expect.any(String));

    // Revoking again is no change: the first revocation time stays.
    expect((await call('DELETE', `/v2/nvcf/keys/${key.id}`, ADMIN_KEY)).status).toBe(204);
    expect((await list()).find((k) => k.id === key.id)?.revokedAt).toBe(after?.revokedAt);
  });

  it('may revoke itself', async () => {
    const { key, value } = await create({ name: 'self', scopes: ['manage_keys', 'list_functions'] });
    expect((await listFunctions(value)).status).toBe(200);
    expect((await call('DELETE', `/v2/nvcf/keys/${key.id}`, value)).status).toBe(204);
    expect((await listFunctions(value)).status).toBe(401);
  });
});

describe('bad input', () => {
  it('a bad body → 400 problem+json naming the field', async () => {
    const name = 'k';
    const scopes = ['list_functions'];
    const cases: [unknown, RegExp][] = [
      ['{not json', /not valid JSON/],
      [[], /JSON object/],
      [{ scopes }, /'name' is required/],
      [{ name: '', scopes }, /'name' must not be empty/],
      [{ name: 'x'.repeat(129), scopes }, /'name' must be at most 128/],
      [{ name: 7, scopes }, /'name' must be a string/],
      [{ name }, /'scopes' is required/],
      [{ name, scopes: [] }, /'scopes' must name at least one scope/],
      [{ name, scopes: 'list_functions' }, /'scopes' must be an array/],
      [
        { name, scopes: ['list_functions', 'be_root'] },
        /'scopes' has an unknown scope "be_root" \(known: .*manage_keys/,
      ],
      [{ name, scopes, functionIds: [] }, /'functionIds' must not be empty/],
      [{ name, scopes, functionIds: ['not-a-uuid'] }, /'functionIds' must be function ids/],
      [{ name, scopes, functionIds: fnId('simple') }, /'functionIds' must be an array/],
      // A misspelt restriction must not quietly make an unrestricted key.
      [{ name, scopes, functionIDs: [fnId('simple')] }, /unknown field\(s\): 'functionIDs'/],
      [{ name, scopes, ncaId: 'two words' }, /'ncaId' must be 1–128 visible ASCII characters/],
      [{ name, scopes, ncaId: '' }, /'ncaId' must be 1–128/],
      [{ name, scopes, ncaId: 7 }, /'ncaId' must be a string/],
    ];
    for (const [body, detail] of cases) {
      const res = await call('POST', '/v2/nvcf/keys', ADMIN_KEY, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problemOf(res)).detail, JSON.stringify(body)).toMatch(detail);
    }
  });

  it('an unknown key id → 404, a malformed one → 400', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await call('DELETE', `/v2/nvcf/keys/${unknown}`, ADMIN_KEY);
    expect(res.status).toBe(404);
    expect((await problemOf(res)).detail).toBe(`API key '${unknown}' not found`);
    const bad = await call('DELETE', '/v2/nvcf/keys/nope', ADMIN_KEY);
    expect(bad.status).toBe(400);
    expect((await problemOf(bad)).detail).toMatch(/keyId 'nope' is not a UUID/);
  });
});

describe('who may manage keys', () => {
  it('no credential → 401; a credential without manage_keys → 403, on every keys route', async () => {
    const { key, value } = await create({ name: 'reader', scopes: ['list_functions', 'invoke_function'] });
    const routes: [string, string, unknown?][] = [
      ['GET', '/v2/nvcf/keys'],
      ['POST', '/v2/nvcf/keys', { name: 'x', scopes: ['list_functions'] }],
      ['DELETE', `/v2/nvcf/keys/${key.id}`],
    ];
    for (const [method, path, body] of routes) {
      const anonymous = await fetch(`${gw.url}${path}`, { method });
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      const denied = await call(method, path, value, body);
      expect(denied.status, `${method} ${path}`).toBe(403);
      expect((await problemOf(denied)).detail).toBe("missing scope: requires 'manage_keys'");
    }
    expect((await list()).find((k) => k.id === key.id)?.revokedAt).toBeUndefined();
  });

  it('a caller grants only scopes it holds', async () => {
    const manager = await create({ name: 'manager', scopes: ['manage_keys', 'list_functions'] });
    const res = await call('POST', '/v2/nvcf/keys', manager.value, {
      name: 'more',
      scopes: ['list_functions', 'invoke_function'],
    });
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toBe(
      "cannot create a key with scope(s) the caller does not hold: 'invoke_function'",
    );
    const made = await create({ name: 'less', scopes: ['list_functions'] }, manager.value);
    expect(made.key.scopes).toEqual(['list_functions']);
    expect(made.key.functionIds).toBeUndefined();
    // Nor may it revoke a key holding more than it does (the admin key).
    const admin = (await list()).find((k) => k.name === 'bootstrap-admin');
    const revokeAdmin = await call('DELETE', `/v2/nvcf/keys/${admin?.id}`, manager.value);
    expect(revokeAdmin.status).toBe(403);
    expect((await listFunctions(ADMIN_KEY)).status).toBe(200);
  });

  it('a caller restricted to functions grants a non-empty subset of them, sees and revokes only such keys', async () => {
    const simple = fnId('simple');
    const restricted = await create({
      name: 'restricted-manager',
      scopes: ['manage_keys', 'invoke_function'],
      functionIds: [simple],
    });
    const attempts: [object, RegExp][] = [
      [{ name: 'all', scopes: ['invoke_function'] }, /every function, while the caller is restricted/],
      [
        { name: 'other', scopes: ['invoke_function'], functionIds: [fnId('classifier')] },
        new RegExp(`function\\(s\\) the caller is not allowed: ${fnId('classifier')}$`),
      ],
      [{ name: 'both', scopes: ['invoke_function'], functionIds: [simple, fnId('classifier')] }, /not allowed/],
    ];
    for (const [body, detail] of attempts) {
      const res = await call('POST', '/v2/nvcf/keys', restricted.value, body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect((await problemOf(res)).detail).toMatch(detail);
    }
    const child = await create({ name: 'child', scopes: ['invoke_function'], functionIds: [simple] }, restricted.value);
    expect(child.key.functionIds).toEqual([simple]);
    expect((await invoke('simple', child.value)).status).toBe(200);
    expect((await invoke('classifier', child.value)).status).toBe(403);

    const seen = (await list(restricted.value)).map((k) => k.id);
    expect(seen).toEqual(expect.arrayContaining([restricted.key.id, child.key.id]));
    const everyone = await list();
    const admin = everyone.find((k) => k.name === 'bootstrap-admin');
    expect(seen).not.toContain(admin?.id);
    // An unrestricted key with the same scope is beyond a restricted caller too.
    const unrestricted = await create({ name: 'unrestricted', scopes: ['invoke_function'] });
    expect(seen).not.toContain(unrestricted.key.id);
    expect((await call('DELETE', `/v2/nvcf/keys/${unrestricted.key.id}`, restricted.value)).status).toBe(403);
    expect((await call('DELETE', `/v2/nvcf/keys/${child.key.id}`, restricted.value)).status).toBe(204);
    expect((await invoke('simple', child.value)).status).toBe(401);
  });

  it('a token with manage_keys manages keys under the same rules', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ scope: 'manage_keys list_functions' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ops')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(JWT_SECRET));
    expect((await create({ name: 'from-token', scopes: ['list_functions'] }, jwt)).key.name).toBe('from-token');
    const res = await call('POST', '/v2/nvcf/keys', jwt, { name: 'x', scopes: ['manage_keys', 'deploy_function'] });
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toMatch(/'deploy_function'/);
  });
});

describe('keys belong to accounts', () => {
  it('an operator makes a key for another account; that account’s admin sees and makes only its own', async () => {
    const teamAdmin = await create({ name: 'team-admin', scopes: [...SCOPES], ncaId: 'team-b' });
    expect(teamAdmin.key.ncaId).toBe('team-b');
    // Its keys are its account's: it cannot reach another account, even holding every scope.
    const own = await create({ name: 'team-ci', scopes: ['invoke_function'] }, teamAdmin.value);
    expect(own.key.ncaId).toBe('team-b');
    for (const ncaId of ['self-hosted', 'team-c']) {
      const res = await call('POST', '/v2/nvcf/keys', teamAdmin.value, {
        name: 'x',
        scopes: ['list_functions'],
        ncaId,
      });
      expect(res.status).toBe(403);
      expect((await problemOf(res)).detail).toMatch(new RegExp(`account '${ncaId}': only an operator`));
    }
    expect((await list(teamAdmin.value)).map((k) => k.name)).toEqual(['team-admin', 'team-ci']);
    const admin = (await list()).find((k) => k.name === 'bootstrap-admin');
    expect(admin?.ncaId).toBe('self-hosted');
    // Another account's key does not exist for it.
    expect((await call('DELETE', `/v2/nvcf/keys/${admin?.id}`, teamAdmin.value)).status).toBe(404);
    // The operator sees every account's keys, and may revoke them.
    expect((await list()).map((k) => k.id)).toEqual(expect.arrayContaining([teamAdmin.key.id, own.key.id]));
    expect((await call('DELETE', `/v2/nvcf/keys/${own.key.id}`, ADMIN_KEY)).status).toBe(204);
  });

  it('only an operator makes keys for another account: a home-account manager without every scope may not', async () => {
    const manager = await create({ name: 'home-manager', scopes: ['manage_keys', 'list_functions'] });
    const res = await call('POST', '/v2/nvcf/keys', manager.value, {
      name: 'x',
      scopes: ['list_functions'],
      ncaId: 'team-d',
    });
    expect(res.status).toBe(403);
    // Its own account, named or not, is fine.
    const same = await create({ name: 'same', scopes: ['list_functions'], ncaId: 'self-hosted' }, manager.value);
    expect(same.key.ncaId).toBe('self-hosted');
  });
});

describe('revocation and the auth cache', () => {
  it('a gateway that trusted a key stops within AUTH_CACHE_MS of its revocation', async () => {
    const cacheMs = 500;
    const cached = await h.gateway({ AUTH_CACHE_MS: String(cacheMs) });
    const { key, value } = await create({ name: 'cached', scopes: ['list_functions'] });
    expect((await listFunctions(value, cached.url)).status).toBe(200);
    expect((await call('DELETE', `/v2/nvcf/keys/${key.id}`, ADMIN_KEY, undefined, cached.url)).status).toBe(204);
    // Nothing else happens: the cache entry simply runs out (a generous margin over the bound for a slow machine).
    await until(
      async () => (await listFunctions(value, cached.url)).status === 401,
      'the revoked key to fail',
      cacheMs + 15_000,
    );
  });
});

describe('the bootstrap admin key', () => {
  it('made by a release without manage_keys gets it from the next gateway start', async () => {
    const secret = `nvapi-old-admin-${crypto.randomUUID()}`;
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const before = SCOPES.filter((s) => s !== 'manage_keys');
    await store.bootstrap({ name: 'bootstrap-admin', scopes: before, secret });
    expect((await call('GET', '/v2/nvcf/keys', secret)).status).toBe(403);

    await h.gateway({ NVCF_BOOTSTRAP_ADMIN_KEY: secret, AUTH_CACHE_MS: '0' });
    expect((await store.verify(secret))?.scopes).toEqual([...SCOPES]);
    // Every gateway reads the key's record, so the one started earlier lets it in too.
    expect((await call('GET', '/v2/nvcf/keys', secret)).status).toBe(200);
  });
});
