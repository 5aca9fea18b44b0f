import { Writable } from 'node:stream';
import { createApiKeyStore } from '@nvcf/control-store';
import { GatewayEnv, type RunningGateway, startGateway, toGatewayConfig } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';

const JWT_SECRET = 'a-test-secret-that-is-at-least-32-characters-long';
const MAX_TTL_SECONDS = 3600;

let h: Harness;
let gw: RunningGateway;
let worker: Awaited<ReturnType<Harness['worker']>>;
const logLines: string[] = [];
let keys: { invokeOnly: string; listOnly: string; simpleOnly: string; revoked: string; revokedId: string };

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  gw = await startGateway(
    toGatewayConfig(
      GatewayEnv.parse({
        ...h.env,
        NVCF_JWT_SECRET: JWT_SECRET,
        NVCF_JWT_MAX_TTL_SECONDS: String(MAX_TTL_SECONDS),
        AUTH_CACHE_MS: '0',
      }),
    ),
    logger,
  );
  const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
  const make = async (scopes: Parameters<typeof store.create>[0]['scopes'], allowedFunctionIds?: string[]) =>
    store.create({ name: 't', scopes, ...(allowedFunctionIds ? { allowedFunctionIds } : {}) });
  const revoked = await make(['invoke_function']);
  await store.revoke(revoked.record.id);
  keys = {
    invokeOnly: (await make(['invoke_function'])).key,
    listOnly: (await make(['list_functions'])).key,
    simpleOnly: (await make(['invoke_function', 'list_functions'], [fnId('simple')])).key,
    revoked: revoked.key,
    revokedId: revoked.record.id,
  };
});
afterAll(async () => {
  await gw?.close();
  await h?.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const simplePath = () => `/v2/nvcf/pexec/functions/${fnId('simple')}`;
const invoke = (path: string, auth: Record<string, string>) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(simpleRequest()),
  });
const problemOf = async (res: Response) => {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as { status: number; title: string; detail: string };
};
interface TokenOptions {
  exp?: string | number;
  secret?: string;
  /** `null`: no `sub` claim. */
  sub?: string | null;
  /** `null`: no `iat` claim; a number: that time (seconds). Default: now. */
  iat?: number | null;
  iss?: string;
  aud?: string;
}
const token = (claims: Record<string, unknown>, opts: TokenOptions = {}) => {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' });
  if (opts.sub !== null) jwt.setSubject(opts.sub ?? 'ci-job');
  if (opts.iat !== null) jwt.setIssuedAt(opts.iat);
  if (opts.exp !== undefined) jwt.setExpirationTime(opts.exp);
  if (opts.iss !== undefined) jwt.setIssuer(opts.iss);
  if (opts.aud !== undefined) jwt.setAudience(opts.aud);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
};
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('every route but /health needs a credential', () => {
  it('missing, malformed, unknown and revoked credentials → 401 problem+json', async () => {
    for (const auth of [{}, { authorization: 'Basic abc' }, bearer('nvapi-nope'), bearer(keys.revoked)]) {
      const res = await invoke(simplePath(), auth);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await problemOf(res)).toMatchObject({
        title: 'Unauthorized',
        status: 401,
        detail: 'client is unauthorized',
      });
    }
    expect((await fetch(`${gw.url}/v2/nvcf/functions`)).status).toBe(401);
    expect((await fetch(`${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-000000000000`)).status).toBe(401);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it('a missing scope → 403', async () => {
    const res = await invoke(simplePath(), bearer(keys.listOnly));
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toMatch(/invoke_function/);
    const list = await fetch(`${gw.url}/v2/nvcf/functions`, { headers: bearer(keys.invokeOnly) });
    expect(list.status).toBe(403);
    expect((await invoke(simplePath(), bearer(keys.invokeOnly))).status).toBe(200);
  });

  it('a key restricted to one function cannot invoke, list or read the requests of another', async () => {
    expect((await invoke(simplePath(), bearer(keys.simpleOnly))).status).toBe(200);
    const other = await invoke(`/v2/nvcf/pexec/functions/${fnId('classifier')}`, bearer(keys.simpleOnly));
    expect(other.status).toBe(403);
    const list = await fetch(`${gw.url}/v2/nvcf/functions`, { headers: bearer(keys.simpleOnly) });
    const { functions } = (await list.json()) as { functions: { name: string }[] };
    expect(functions.map((f) => f.name)).toEqual(['simple']);

    // A classifier request the admin made, waiting (no worker runs): to the restricted key it is an unknown
    // request (a 404 that names no function), and the result is still there for the admin once a worker ran it.
    await worker.close();
    const req = {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array(784).fill(0.1) }],
    };
    const accepted = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, req, {
      'nvcf-poll-seconds': '1',
    });
    expect(accepted.status).toBe(202);
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';
    const denied = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: bearer(keys.simpleOnly) });
    expect(denied.status).toBe(404);
    expect((await problemOf(denied)).detail).toBe(
      `Request '${reqId}' not found (unknown, expired or already delivered)`,
    );
    worker = await h.worker();
    const admin = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...bearer(ADMIN_KEY), 'nvcf-poll-seconds': '30' },
    });
    expect(admin.status).toBe(200);
  });

  it('accepts HS256 tokens with a scope claim and refuses expired, unsigned-by-us or exp-less ones', async () => {
    const good = await token({ scope: 'invoke_function list_functions' }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(good))).status).toBe(200);
    const arrayScope = await token({ scope: ['invoke_function'] }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(arrayScope))).status).toBe(200);
    const noScope = await token({ scope: 'list_functions' }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(noScope))).status).toBe(403);
    const restricted = await token({ scope: 'invoke_function', function_ids: [fnId('classifier')] }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(restricted))).status).toBe(403);
    const expired = await token({ scope: 'invoke_function' }, { exp: Math.floor(Date.now() / 1000) - 10 });
    const forged = await token({ scope: 'invoke_function' }, { exp: '5m', secret: 'x'.repeat(40) });
    const forever = await token({ scope: 'invoke_function' });
    for (const t of [expired, forged, forever]) expect((await invoke(simplePath(), bearer(t))).status).toBe(401);
  });

  it('never writes a credential to the log', () => {
    const all = logLines.join('');
    expect(all).toContain('"msg":"request"');
    for (const k of [ADMIN_KEY, keys.invokeOnly, keys.simpleOnly, keys.revoked]) expect(all).not.toContain(k);
    expect(all).not.toMatch(/Bearer /);
  });
});

describe('token subjects', () => {
  it("a token whose sub is an API key's id is not that key: it sees none of the key's assets", async () => {
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key, record } = await store.create({ name: 'asset-owner', scopes: ['invoke_function'] });
    const created = await fetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream', description: 'mine' }),
    });
    expect(created.status).toBe(200);
    const mine = await fetch(`${gw.url}/v2/nvcf/assets`, { headers: bearer(key) });
    expect(((await mine.json()) as { assets: unknown[] }).assets).toHaveLength(1);
    const impostor = await token({ scope: 'invoke_function' }, { sub: record.id, exp: '5m' });
    const theirs = await fetch(`${gw.url}/v2/nvcf/assets`, { headers: bearer(impostor) });
    expect(theirs.status).toBe(200);
    expect(((await theirs.json()) as { assets: unknown[] }).assets).toEqual([]);
  });
});

describe('token claims', () => {
  const refused = async (jwt: string, detail: RegExp) => {
    const res = await invoke(simplePath(), bearer(jwt));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect((await problemOf(res)).detail).toMatch(detail);
  };

  it('refuses function_ids that is not an array of strings (a string once granted every function)', async () => {
    const asString = await token({ scope: 'invoke_function', function_ids: fnId('classifier') }, { exp: '5m' });
    await refused(asString, /function_ids/);
    const numbers = await token({ scope: 'invoke_function', function_ids: [1, 2] }, { exp: '5m' });
    await refused(numbers, /function_ids/);
    const asObject = await token({ scope: 'invoke_function', function_ids: { a: fnId('simple') } }, { exp: '5m' });
    await refused(asObject, /function_ids/);
    const allowed = await token({ scope: 'invoke_function', function_ids: [fnId('simple')] }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(allowed))).status).toBe(200);
  });

  it('names its account in nca_id (absent: the gateway’s own); refuses one that is not an NCA id', async () => {
    await refused(await token({ scope: 'invoke_function', nca_id: 7 }, { exp: '5m' }), /invalid token claim 'nca_id'/);
    await refused(await token({ scope: 'invoke_function', nca_id: 'a b' }, { exp: '5m' }), /'nca_id'.*NCA id/);
    // The repository's functions are the gateway's own account's: a token of another account does not see them.
    const elsewhere = await token({ scope: 'invoke_function', nca_id: 'team-z' }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(elsewhere))).status).toBe(404);
    const home = await token({ scope: 'invoke_function', nca_id: 'self-hosted' }, { exp: '5m' });
    expect((await invoke(simplePath(), bearer(home))).status).toBe(200);
  });

  it('refuses a token without a subject (they would all share one principal)', async () => {
    await refused(await token({ scope: 'invoke_function' }, { exp: '5m', sub: null }), /sub/);
    await refused(await token({ scope: 'invoke_function' }, { exp: '5m', sub: '' }), /sub/);
  });

  it('refuses tokens that live longer than NVCF_JWT_MAX_TTL_SECONDS', async () => {
    const claims = { scope: 'invoke_function' };
    const now = nowSeconds();
    expect((await invoke(simplePath(), bearer(await token(claims, { exp: now + MAX_TTL_SECONDS })))).status).toBe(200);
    await refused(await token(claims, { exp: now + MAX_TTL_SECONDS + 60 }), /lifetime/);
    // Issued long ago, still valid for a minute: its lifetime (exp - iat) is what counts.
    await refused(await token(claims, { iat: now - 2 * MAX_TTL_SECONDS, exp: now + 60 }), /lifetime/);
    // Without iat, the time left counts.
    await refused(await token(claims, { iat: null, exp: now + MAX_TTL_SECONDS + 60 }), /lifetime/);
    const noIat = await token(claims, { iat: null, exp: now + 60 });
    expect((await invoke(simplePath(), bearer(noIat))).status).toBe(200);
    // An iat in the future cannot stretch a token's life past the cap.
    await refused(
      await token(claims, { iat: now + 10 * MAX_TTL_SECONDS, exp: now + 10 * MAX_TTL_SECONDS + 60 }),
      /lifetime/,
    );
  });

  it('checks iss and aud when NVCF_JWT_ISSUER and NVCF_JWT_AUDIENCE are set', async () => {
    const strict = await h.gateway({
      NVCF_JWT_SECRET: JWT_SECRET,
      NVCF_JWT_ISSUER: 'https://issuer.example',
      NVCF_JWT_AUDIENCE: 'nvcf-gateway',
      AUTH_CACHE_MS: '0',
    });
    const call = async (jwt: string) => {
      const res = await fetch(`${strict.url}/v2/nvcf/functions`, { headers: bearer(jwt) });
      return { status: res.status, body: (await res.json()) as { detail?: string } };
    };
    const claims = { scope: 'list_functions' };
    const good = await token(claims, { exp: '5m', iss: 'https://issuer.example', aud: 'nvcf-gateway' });
    expect((await call(good)).status).toBe(200);
    for (const [jwt, claim] of [
      [await token(claims, { exp: '5m', aud: 'nvcf-gateway' }), 'iss'],
      [await token(claims, { exp: '5m', iss: 'https://other.example', aud: 'nvcf-gateway' }), 'iss'],
      [await token(claims, { exp: '5m', iss: 'https://issuer.example' }), 'aud'],
      [await token(claims, { exp: '5m', iss: 'https://issuer.example', aud: 'someone-else' }), 'aud'],
    ] as const) {
      const { status, body } = await call(jwt);
      expect(status).toBe(401);
      expect(body.detail).toContain(claim);
    }
  });
});

describe('bootstrap admin key', () => {
  it('stays revoked across gateway restarts', async () => {
    const bootKey = `nvapi-boot-${crypto.randomUUID()}`;
    const env = { NVCF_BOOTSTRAP_ADMIN_KEY: bootKey, AUTH_CACHE_MS: '0' };
    const list = (g: RunningGateway) => fetch(`${g.url}/v2/nvcf/functions`, { headers: bearer(bootKey) });
    const first = await h.gateway(env);
    expect((await list(first)).status).toBe(200);
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const record = await store.verify(bootKey);
    expect(record?.name).toBe('bootstrap-admin');
    expect(await store.revoke(record?.id ?? '')).toBe(true);
    expect((await list(first)).status).toBe(401);
    await first.close();

    const restarted = await h.gateway(env);
    expect((await list(restarted)).status).toBe(401);
    expect(await store.verify(bootKey)).toBeUndefined();
  });
});
