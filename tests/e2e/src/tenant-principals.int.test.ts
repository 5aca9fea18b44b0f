import { createApiKeyStore, createAssetStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient, int32Bytes } from './grpc-test-fixture.ts';
import { createHarness, fnId, gfetch, type Harness, simpleRequest } from './harness.ts';

/**
 * One principal is one (kind, account, subject). Two accounts, team-a and team-b, each mint a token for the same
 * `sub` (as the README's `--subject ci-job` example invites): account A's token must not list, read, delete or use
 * B's assets, read or cancel B's request on a function shared with both, find B's request by reusing its
 * Idempotency-Key, or draw on B's rate, open-request and asset-quota buckets. And somebody else's request id is
 * answered exactly as an unknown one on every surface, a token restricted to other functions included (no function
 * id in the answer).
 */
const JWT_SECRET = 'a-tenant-principals-test-secret-of-32-characters';
const DESC_HEADER = 'x-amz-meta-nvcf-asset-description';

let h: Harness;
let gw: RunningGateway;
/** Buckets small enough to fill: 4 calls a minute and 1 live asset per principal. */
let tight: RunningGateway;
/** One open long-poll per principal (and no rate limit: probing it costs nothing). */
let waits: RunningGateway;
const simple = fnId('simple');

async function token(ncaId: string, sub: string, claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'invoke_function queue_details', nca_id: ncaId, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(JWT_SECRET));
}

const as = (credential: string, headers: Record<string, string> = {}) => ({
  authorization: `Bearer ${credential}`,
  ...headers,
});

function invoke(base: string, credential: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v2/nvcf/pexec/functions/${simple}`, {
    method: 'POST',
    headers: as(credential, { 'content-type': 'application/json', 'nvcf-poll-seconds': '1', ...headers }),
    body: JSON.stringify(simpleRequest()),
  });
}

/** A request of `credential`'s that stays queued (no worker runs): its id. */
async function queued(credential: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await invoke(gw.url, credential, headers);
  expect(res.status, await res.clone().text()).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
}

/** Status, the headers that tell anything, and the body, with the request id written as `<id>`. */
async function answer(res: Response, requestId: string) {
  const id = (text: string | null) => text?.replaceAll(requestId, '<id>');
  const headers = ['content-type', 'nvcf-status', 'nvcf-reqid'].map((name) => [name, id(res.headers.get(name))]);
  return { status: res.status, headers, body: id(await res.text()) };
}

/** Every surface that takes a request id, as `credential` sees `requestId` there. */
const surfaces: [string, (id: string) => string, Record<string, string>][] = [
  ['GET', (id) => `/v2/nvcf/pexec/status/${id}`, { 'nvcf-poll-seconds': '1' }],
  ['GET', (id) => `/v2/nvcf/pexec/status/${id}`, { 'nvcf-poll-seconds': '1', accept: 'text/event-stream' }],
  ['GET', (id) => `/v2/nvcf/exec/status/${id}`, { 'nvcf-poll-seconds': '1' }],
  ['GET', (id) => `/v2/nvcf/queues/${id}/position`, {}],
  ['DELETE', (id) => `/v2/nvcf/pexec/status/${id}`, {}],
];

/** Asserts that to `credential`, `requestId` is answered on every surface exactly as an unknown id. */
async function expectUnknownTo(credential: string, requestId: string): Promise<void> {
  const unknown = crypto.randomUUID();
  for (const [method, path, headers] of surfaces) {
    const at = async (id: string) =>
      answer(await fetch(`${gw.url}${path(id)}`, { method, headers: as(credential, headers) }), id);
    const seen = await at(requestId);
    expect(seen.status, `${method} ${path('…')}`).toBe(404);
    expect(seen, `${method} ${path('…')}`).toEqual(await at(unknown));
  }
}

/** B's request is still queued, uncancelled: B's own poll says so. */
async function stillPending(credential: string, requestId: string): Promise<void> {
  const res = await fetch(`${gw.url}/v2/nvcf/pexec/status/${requestId}`, {
    headers: as(credential, { 'nvcf-poll-seconds': '1' }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
}

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; no worker runs: requests stay queued
  const env = { NVCF_JWT_SECRET: JWT_SECRET };
  gw = await h.gateway(env);
  tight = await h.gateway({ ...env, RATE_LIMIT_PER_MINUTE: '4', ASSET_QUOTA_COUNT: '1' });
  waits = await h.gateway({ ...env, RATE_LIMIT_PER_MINUTE: '0', MAX_OPEN_REQUESTS_PER_CREDENTIAL: '1' });
  // The operator shares its `simple` function with both accounts.
  const shared = await gfetch(`${gw.url}/v2/nvcf/authorizations/functions/${simple}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ authorizedParties: [{ ncaId: 'team-a' }, { ncaId: 'team-b' }] }),
  });
  expect(shared.status, await shared.text()).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

describe('the same sub in two accounts is two principals', () => {
  it('assets: A neither lists, reads, deletes nor invokes with B’s', async () => {
    const [a, b] = await Promise.all([token('team-a', 'ci-job'), token('team-b', 'ci-job')]);
    const created = await fetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: as(b, { 'content-type': 'application/json' }),
      body: JSON.stringify({ contentType: 'text/plain', description: 'b-only' }),
    });
    expect(created.status).toBe(200);
    const { assetId, uploadUrl } = (await created.json()) as { assetId: string; uploadUrl: string };
    const put = await fetch(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain', [DESC_HEADER]: 'b-only' },
      body: 'team-b secret',
    });
    expect(put.status).toBe(200);

    const list = (credential: string) =>
      fetch(`${gw.url}/v2/nvcf/assets`, { headers: as(credential) }).then(
        async (res) => ((await res.json()) as { assets: { assetId: string }[] }).assets,
      );
    expect((await list(b)).map((x) => x.assetId)).toEqual([assetId]);
    expect(await list(a)).toEqual([]);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${gw.url}/v2/nvcf/assets/${assetId}`, { method, headers: as(a) });
      expect(res.status, method).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toBe(`NotFound error: failed to find asset ${assetId}`);
    }
    const named = await invoke(gw.url, a, { 'nvcf-input-asset-references': assetId });
    expect(named.status).toBe(404);
    expect(((await named.json()) as { detail: string }).detail).toBe(`NotFound error: failed to find asset ${assetId}`);
    // Still B's, with its bytes.
    const mine = await fetch(`${gw.url}/v2/nvcf/assets/${assetId}`, { headers: as(b) });
    expect(mine.status).toBe(200);
  });

  it('requests: A cannot read, follow, locate or cancel B’s on a function shared with both', async () => {
    const [a, b] = await Promise.all([token('team-a', 'ci-job'), token('team-b', 'ci-job')]);
    const reqId = await queued(b);
    await expectUnknownTo(a, reqId);
    await stillPending(b, reqId);
  });

  it('Idempotency-Key: A reusing B’s key (same body) starts its own request', async () => {
    const [a, b] = await Promise.all([token('team-a', 'ci-job'), token('team-b', 'ci-job')]);
    const key = { 'idempotency-key': `"deploy-${crypto.randomUUID()}"` };
    const theirs = await queued(b, key);
    expect(await queued(b, key)).toBe(theirs); // the key works for B
    const mine = await queued(a, key);
    expect(mine).not.toBe(theirs);
    await stillPending(a, mine);
    await stillPending(b, theirs);
  });

  it('buckets: B’s open long-poll, rate budget and asset quota leave A’s untouched', async () => {
    // Subjects of their own: the other tests' calls count in the same Redis rate windows.
    const [a, b] = await Promise.all([token('team-a', 'bucket-job'), token('team-b', 'bucket-job')]);
    const unknownStatus = (base: string, credential: string) =>
      fetch(`${base}/v2/nvcf/pexec/status/${crypto.randomUUID()}`, { headers: as(credential) });
    const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;

    // B holds its one open long-poll.
    const reqId = await queued(b);
    const held = new AbortController();
    const holding = fetch(`${waits.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: as(b, { 'nvcf-poll-seconds': '60' }),
      signal: held.signal,
    }).catch(() => undefined);
    const deadline = Date.now() + 20_000;
    let probe = await unknownStatus(waits.url, b);
    while (probe.status !== 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50)); // 404 until the held poll is counted
      probe = await unknownStatus(waits.url, b);
    }
    expect(probe.status).toBe(429);
    expect(await detail(probe)).toMatch(/too many open requests/);
    expect((await unknownStatus(waits.url, a)).status).toBe(404); // A's own open-request bucket is empty
    held.abort();
    await holding;

    // B holds its one live asset; A may still create its own.
    const create = (credential: string) =>
      fetch(`${tight.url}/v2/nvcf/assets`, {
        method: 'POST',
        headers: as(credential, { 'content-type': 'application/json' }),
        body: JSON.stringify({ contentType: 'text/plain', description: 'quota' }),
      });
    expect((await create(b)).status).toBe(200);
    expect((await create(b)).status).toBe(403);
    expect((await create(a)).status).toBe(200);

    // B spends its rate budget; A still has its own.
    let spent = await unknownStatus(tight.url, b);
    for (let i = 0; i < 10 && spent.status !== 429; i++) spent = await unknownStatus(tight.url, b);
    expect(spent.status).toBe(429);
    expect(await detail(spent)).toMatch(/rate limit exceeded/);
    expect((await unknownStatus(tight.url, a)).status).toBe(404);
    // gRPC ModelInfer draws on the same per-principal budget: B's is spent there too, A's is not (its call runs and,
    // with no worker, times out).
    const client = grpcClient(`127.0.0.1:${tight.grpcPort}`);
    const infer = (credential: string) =>
      client.fail(
        'ModelInfer',
        {
          model_name: 'simple',
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
          ],
          raw_input_contents: [int32Bytes(Array(16).fill(1)), int32Bytes(Array(16).fill(2))],
        },
        { metadata: { ...as(credential), 'function-id': simple }, deadlineMs: 1500 },
      );
    try {
      const theirs = await infer(b);
      expect(theirs.error.code).toBe(8); // RESOURCE_EXHAUSTED
      expect(theirs.error.details).toMatch(/rate limit exceeded/);
      const mine = await infer(a);
      expect(mine.error.details).not.toMatch(/rate limit/);
      expect(mine.error.code).not.toBe(8);
    } finally {
      client.close();
    }
  });
});

describe('assets stored by the release before (owner: the bare subject)', () => {
  it('an API key’s stay its own; a token’s are nobody’s, in either account', async () => {
    const assets = createAssetStore(h.redis, createKeys(h.keyPrefix));
    const keyStore = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key, record } = await keyStore.create({ name: 'before', scopes: ['invoke_function'], ncaId: 'team-b' });
    const old = { contentType: 'text/plain', description: 'before', ncaId: 'team-b' };
    const keys = await assets.create({ ...old, ownerSubject: record.id });
    const tokens = await assets.create({ ...old, ownerSubject: 'token:legacy-job' });
    const listed = async (credential: string) =>
      (
        (await (await fetch(`${gw.url}/v2/nvcf/assets`, { headers: as(credential) })).json()) as {
          assets: { assetId: string }[];
        }
      ).assets.map((x) => x.assetId);
    expect(await listed(key)).toEqual([keys.assetId]);
    expect((await fetch(`${gw.url}/v2/nvcf/assets/${keys.assetId}`, { headers: as(key) })).status).toBe(200);
    for (const account of ['team-a', 'team-b']) {
      const t = await token(account, 'legacy-job');
      expect(await listed(t)).toEqual([]);
      expect((await fetch(`${gw.url}/v2/nvcf/assets/${tokens.assetId}`, { headers: as(t) })).status).toBe(404);
    }
  });
});

describe('somebody else’s request id is answered as an unknown one', () => {
  it('to another account’s API key and to a token restricted to other functions, on every surface', async () => {
    const keyIn = async (ncaId: string) => {
      const res = await gfetch(`${gw.url}/v2/nvcf/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `key-${ncaId}`, scopes: ['invoke_function', 'queue_details'], ncaId }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { value: string }).value;
    };
    const [keyA, keyB] = await Promise.all([keyIn('team-a'), keyIn('team-b')]);
    const reqId = await queued(keyB);
    await expectUnknownTo(keyA, reqId);
    // Same account, another function only: the 404 names no function.
    const restricted = await token('team-b', 'other-job', { function_ids: [fnId('generative')] });
    await expectUnknownTo(restricted, reqId);
    await stillPending(keyB, reqId);
  });
});
