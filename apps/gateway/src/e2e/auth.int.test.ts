import { Writable } from 'node:stream';
import { createApiKeyStore, createKeys } from '@nvcf/queue';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayEnv, toGatewayConfig } from '../config.ts';
import { type RunningGateway, startGateway } from '../server.ts';
import { ADMIN_KEY, createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';

const JWT_SECRET = 'a-test-secret-that-is-at-least-32-characters-long';

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
    toGatewayConfig(GatewayEnv.parse({ ...h.env, NVCF_JWT_SECRET: JWT_SECRET, AUTH_CACHE_MS: '0' })),
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
const token = (claims: Record<string, unknown>, opts: { exp?: string | number; secret?: string } = {}) => {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('ci-job');
  if (opts.exp !== undefined) jwt.setExpirationTime(opts.exp);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
};

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

    // A classifier request the admin made, waiting (no worker runs): the restricted key gets 403, and
    // the result is still there for the admin once a worker ran it.
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
    expect(denied.status).toBe(403);
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
