import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient, int32Bytes } from './grpc-test-fixture.ts';
import { createHarness, fnId, gfetch, type Harness, simpleRequest } from './harness.ts';

/**
 * Accounts and function sharing (NVCF API reference: authorized accounts): account A's function is unknown to
 * account B (404 everywhere) until A authorizes B; then B lists it (`visibility=authorized`) and invokes it over
 * pexec, exec and gRPC, and manages nothing of it (403). Removing B refuses it again: at once on the gateway that
 * removed it, within FUNCTION_CACHE_MS on the others. A version's own authorization covers that version only.
 */
const JWT_SECRET = 'a-function-sharing-test-secret-of-32-characters';
const CACHE_MS = 300;

let h: Harness;
/** Caches functions for a minute: only invalidation on change can make a removal bite at once here. */
let gw: RunningGateway;
/** Caches functions for CACHE_MS: a removal made on `gw` reaches it within that. */
let other: RunningGateway;
let a: string;
let b: string;
let fid: string;
let v1: string;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (method: string, path: string, key: string, body?: unknown, base = gw.url, headers = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...bearer(key), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const json = async <T>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};
const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;
const pexec = (key: string, fn: string, version?: string, base = gw.url, headers = {}) =>
  call('POST', `/v2/nvcf/pexec/functions/${fn}${version ? `/versions/${version}` : ''}`, key, simpleRequest(), base, {
    'nvcf-poll-seconds': '30',
    ...headers,
  });
const exec = (key: string, fn: string) =>
  call('POST', `/v2/nvcf/exec/functions/${fn}`, key, {
    requestHeader: { pollDurationSeconds: 30 },
    requestBody: simpleRequest(),
  });
interface Fn {
  id: string;
  versionId: string;
  ncaId: string;
  ownedByDifferentAccount: boolean;
}
const listed = async (key: string, visibility?: string) => {
  const query = visibility ? `?visibility=${visibility}` : '';
  return (await json<{ functions: Fn[] }>(await call('GET', `/v2/nvcf/functions${query}`, key))).functions;
};
const authorizations = `/v2/nvcf/authorizations/functions`;
const share = (fn: string, ncaIds: string[], version?: string) =>
  call('POST', `${authorizations}/${fn}${version ? `/versions/${version}` : ''}`, a, {
    authorizedParties: ncaIds.map((ncaId) => ({ ncaId })),
  });

async function createKey(name: string, ncaId: string): Promise<string> {
  const scopes = [
    'invoke_function',
    'list_functions',
    'register_function',
    'update_function',
    'delete_function',
    'deploy_function',
    'queue_details',
    'authorize_clients',
  ];
  const res = await gfetch(`${gw.url}/v2/nvcf/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, scopes, ncaId }),
  });
  return (await json<{ value: string }>(res, 201)).value;
}

const modelFunction = (name: string) => ({
  name,
  inferenceUrl: '/v2/models/simple/infer',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
});
const DEPLOYMENT = {
  deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1 }],
};
async function deployed(body: object, fn?: string): Promise<Fn> {
  const path = fn ? `/v2/nvcf/functions/${fn}/versions` : '/v2/nvcf/functions';
  const { function: created } = await json<{ function: Fn }>(await call('POST', path, a, body));
  const deployment = `/v2/nvcf/deployments/functions/${created.id}/versions/${created.versionId}`;
  await json(await call('POST', deployment, a, DEPLOYMENT));
  return created;
}

/** A gRPC ModelInfer of `simple` through the function: its status code (0: OK). */
async function grpcInfer(key: string, fn: string): Promise<number> {
  const client = grpcClient(`127.0.0.1:${gw.grpcPort}`);
  const request = {
    model_name: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
    ],
    raw_input_contents: [int32Bytes(Array(16).fill(1)), int32Bytes(Array(16).fill(2))],
  };
  try {
    await client.call('ModelInfer', request, { metadata: { ...bearer(key), 'function-id': fn } });
    return 0;
  } catch (err) {
    return (err as { code: number }).code;
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  gw = await h.gateway({ FUNCTION_CACHE_MS: '60000', NVCF_JWT_SECRET: JWT_SECRET });
  other = await h.gateway({ FUNCTION_CACHE_MS: String(CACHE_MS) });
  // Two accounts, made by the operator (the bootstrap admin key).
  a = await createKey('alice', 'team-a');
  b = await createKey('bob', 'team-b');
  // A builds on the repository model `simple`, the operator's: it may once the operator shares that model's function.
  const simple = await gfetch(`${gw.url}${authorizations}/${fnId('simple')}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ authorizedParties: [{ ncaId: 'team-a' }] }),
  });
  await json(simple);
  const fn = await deployed(modelFunction('shared-simple'));
  fid = fn.id;
  v1 = fn.versionId;
  expect(fn.ncaId).toBe('team-a');
  expect((await pexec(a, fid)).status).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

describe('another account’s function', () => {
  it('is unknown to B until shared: 404 to list, read, invoke (pexec, exec, gRPC), manage and share', async () => {
    expect((await listed(b)).map((f) => f.id)).not.toContain(fid);
    expect((await listed(a, 'private')).map((f) => f.id)).toEqual([fid]);
    const paths: [string, string, unknown?][] = [
      ['GET', `/v2/nvcf/functions/${fid}/versions`],
      ['GET', `/v2/nvcf/functions/${fid}/versions/${v1}`],
      ['POST', `/v2/nvcf/functions/${fid}/versions`, modelFunction('mine-now')],
      ['DELETE', `/v2/nvcf/functions/${fid}/versions/${v1}`],
      ['GET', `/v2/nvcf/deployments/functions/${fid}/versions/${v1}`],
      ['GET', `/v2/nvcf/queues/functions/${fid}`],
      ['GET', `${authorizations}/${fid}`],
      ['POST', `${authorizations}/${fid}`, { authorizedParties: [{ ncaId: 'team-b' }] }],
    ];
    for (const [method, path, body] of paths) {
      const res = await call(method, path, b, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await detail(res)).toMatch(new RegExp(`Function '${fid}'.* not found`));
    }
    expect((await pexec(b, fid)).status).toBe(404);
    expect((await exec(b, fid)).status).toBe(404);
    expect(await grpcInfer(b, fid)).toBe(5); // NOT_FOUND
    // Nothing changed for A.
    expect((await listed(a)).find((f) => f.id === fid)?.ownedByDifferentAccount).toBe(false);
  });
});

describe('shared with every version', () => {
  it('B lists it as authorized and invokes it; manages nothing of it (403)', async () => {
    const shared = await json<{ function: { authorizedParties: { ncaId: string }[] } }>(await share(fid, ['team-b']));
    expect(shared.function.authorizedParties).toEqual([{ ncaId: 'team-b' }]);

    const seen = await listed(b, 'authorized');
    expect(seen).toEqual([
      expect.objectContaining({ id: fid, versionId: v1, ncaId: 'team-a', ownedByDifferentAccount: true }),
    ]);
    expect(await listed(b, 'private')).toEqual([]);
    expect((await listed(b)).map((f) => f.id)).toContain(fid);
    expect((await listed(b, 'private,authorized')).map((f) => f.id)).toEqual([fid]);
    expect(await json(await call('GET', `/v2/nvcf/functions/${fid}/versions/${v1}`, b))).toMatchObject({
      function: { id: fid, ownedByDifferentAccount: true },
    });
    expect(await json(await call('GET', '/v2/nvcf/functions/ids?visibility=authorized', b))).toEqual({
      functionIds: [fid],
    });
    const bad = await call('GET', '/v2/nvcf/functions?visibility=shared', b);
    expect(bad.status).toBe(400);
    expect(await detail(bad)).toMatch(/'visibility' must be authorized, private, public/);

    expect((await pexec(b, fid)).status).toBe(200);
    expect((await exec(b, fid)).status).toBe(200);
    expect(await grpcInfer(b, fid)).toBe(0);
    expect((await call('GET', `/v2/nvcf/queues/functions/${fid}`, b)).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: 'invoke_function', nca_id: 'team-b' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('bob-ci')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(JWT_SECRET));
    expect((await pexec(token, fid)).status).toBe(200);

    const manage: [string, string, unknown?][] = [
      ['POST', `/v2/nvcf/functions/${fid}/versions`, modelFunction('mine-now')],
      ['PUT', `/v2/nvcf/metadata/functions/${fid}/versions/${v1}`, { tags: ['mine'] }],
      ['DELETE', `/v2/nvcf/functions/${fid}/versions/${v1}`],
      ['GET', `/v2/nvcf/deployments/functions/${fid}/versions/${v1}`],
      ['DELETE', `/v2/nvcf/deployments/functions/${fid}/versions/${v1}`],
      ['GET', `/v2/nvcf/stats/functions/${fid}/versions/${v1}`],
      ['GET', `${authorizations}/${fid}`],
      ['GET', `${authorizations}/${fid}/versions/${v1}`],
      ['POST', `${authorizations}/${fid}`, { authorizedParties: [{ ncaId: 'team-c' }] }],
      ['PATCH', `${authorizations}/${fid}/add`, { authorizedParty: { ncaId: 'team-c' } }],
      ['PATCH', `${authorizations}/${fid}/remove`, { authorizedParty: { ncaId: 'team-b' } }],
      ['DELETE', `${authorizations}/${fid}`],
    ];
    for (const [method, path, body] of manage) {
      const res = await call(method, path, b, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await detail(res)).toMatch(/belongs to another account/);
    }
    // Still A's, unchanged.
    const parties = await json<{ functions: { authorizedParties: unknown[] }[] }>(
      await call('GET', `${authorizations}/${fid}`, a),
    );
    expect(parties.functions.map((f) => f.authorizedParties)).toEqual([[{ ncaId: 'team-b' }]]);
  });

  it('B’s requests are B’s; removing B refuses it again, its own requests included', async () => {
    // A container function no worker serves: B's request waits in its queue.
    const waiting = await deployed({
      name: 'shared-queue',
      inferenceUrl: '/echo',
      inferencePort: 8000,
      containerImage: 'nvcf/echo-server:dev',
    });
    await json(await share(waiting.id, ['team-b']));
    const queued = await pexec(b, waiting.id, undefined, gw.url, { 'nvcf-poll-seconds': '1' });
    expect(queued.status).toBe(202);
    const reqId = queued.headers.get('nvcf-reqid') ?? '';
    const status = `/v2/nvcf/pexec/status/${reqId}`;
    expect((await call('GET', status, b, undefined, gw.url, { 'nvcf-poll-seconds': '1' })).status).toBe(202);
    expect((await call('GET', `/v2/nvcf/queues/${reqId}/position`, b)).status).toBe(200);
    // The function's owner is another credential: to it the request is unknown.
    expect((await call('GET', status, a)).status).toBe(404);

    // B invokes on the other gateway too, which caches what it found.
    expect((await pexec(b, fid, undefined, other.url)).status).toBe(200);
    const removed = await call('PATCH', `${authorizations}/${fid}/remove`, a, { authorizedParty: { ncaId: 'team-b' } });
    expect(await json(removed)).toEqual({ function: { id: fid, ncaId: 'team-a', authorizedParties: [] } });
    // At once on the gateway that removed it.
    expect((await pexec(b, fid)).status).toBe(404);
    expect(await listed(b, 'authorized')).toHaveLength(1); // the queue function only
    // Within FUNCTION_CACHE_MS on the other (a generous margin for a slow machine).
    const deadline = Date.now() + CACHE_MS + 10_000;
    let answer = 200;
    while (answer !== 404 && Date.now() < deadline) {
      answer = (await pexec(b, fid, undefined, other.url)).status;
      if (answer !== 404) await new Promise((r) => setTimeout(r, 50));
    }
    expect(answer).toBe(404);

    await json(await call('DELETE', `${authorizations}/${waiting.id}`, a));
    for (const res of [
      await call('GET', status, b),
      await call('GET', `/v2/nvcf/exec/status/${reqId}`, b),
      await call('GET', `/v2/nvcf/queues/${reqId}/position`, b),
      await call('DELETE', status, b),
    ]) {
      expect(res.status).toBe(403);
      expect(await detail(res)).toMatch(/account 'team-b' is not authorized/);
    }
    // The operator may still read it.
    expect((await gfetch(`${gw.url}${status}`, { headers: { 'nvcf-poll-seconds': '1' } })).status).toBe(202);
  });
});

describe('shared with one version', () => {
  it('covers that version only, and goes with it when it is deleted', async () => {
    const v2 = (await deployed(modelFunction('shared-simple'), fid)).versionId;
    const versionShare = await json<{ function: { versionId: string; authorizedParties: unknown[] } }>(
      await share(fid, ['team-b'], v2),
    );
    expect(versionShare.function).toMatchObject({ versionId: v2, authorizedParties: [{ ncaId: 'team-b' }] });

    expect((await listed(b, 'authorized')).filter((f) => f.id === fid).map((f) => f.versionId)).toEqual([v2]);
    const versions = await json<{ functions: Fn[] }>(await call('GET', `/v2/nvcf/functions/${fid}/versions`, b));
    expect(versions.functions.map((f) => f.versionId)).toEqual([v2]);
    expect((await call('GET', `/v2/nvcf/functions/${fid}/versions/${v1}`, b)).status).toBe(404);
    expect((await pexec(b, fid, v1)).status).toBe(404);
    expect((await pexec(b, fid, v2)).status).toBe(200);
    // Unpinned, B's calls go to the version it may use (a request id starts with its version's tag).
    for (let i = 0; i < 3; i++) {
      const res = await pexec(b, fid);
      expect(res.status).toBe(200);
      expect(res.headers.get('nvcf-reqid')?.slice(0, 8)).toBe(v2.slice(0, 8));
    }
    // A version's answer lists its own and the inherited accounts; the function's, its own.
    await json(await share(fid, ['team-c']));
    const all = await json<{ functions: { versionId: string; authorizedParties: { ncaId: string }[] }[] }>(
      await call('GET', `${authorizations}/${fid}`, a),
    );
    expect(all.functions.map((f) => [f.versionId, f.authorizedParties.map((p) => p.ncaId)])).toEqual([
      [v1, ['team-c']],
      [v2, ['team-b', 'team-c']],
    ]);

    await call('DELETE', `/v2/nvcf/functions/${fid}/versions/${v2}`, a);
    expect((await pexec(b, fid)).status).toBe(404);
    const after = await json<{ functions: { versionId: string }[] }>(await call('GET', `${authorizations}/${fid}`, a));
    expect(after.functions.map((f) => f.versionId)).toEqual([v1]);
    // Deleting the last version deletes every authorization of the function.
    expect((await call('DELETE', `/v2/nvcf/functions/${fid}/versions/${v1}`, a)).status).toBe(204);
    expect(await h.redis.exists(createKeys(h.keyPrefix).functionAuthorizations(fid))).toBe(0);
  });
});
