import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { serve } from '@hono/node-server';
import { assetObjectKey, createApiKeyStore, createAssetStore } from '@nvcf/control-store';
import { AppError, SCOPES } from '@nvcf/protocol';
import { createKeys } from '@nvcf/queue';
import { createLocalDirStore, type ObjectStore, signUrl } from '@nvcf/storage';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../auth/authenticator.ts';
import { principalKey } from '../auth/principal.ts';
import { errorToProblem, problemResponse } from '../http/problem-response.ts';
import { resolveAssetReferences } from './asset-references.ts';
import { assetRoutes } from './asset-routes.ts';
import { type AssetService, type AssetServiceOptions, createAssetService, uploadPath } from './asset-service.ts';

const SECRET = 'assets-int-test-secret-assets-int-test-secret';
const DESC_HEADER = 'x-amz-meta-nvcf-asset-description';

interface AssetGateway {
  url: string;
  assets: AssetService;
  objects: ObjectStore;
  dir: string;
  close(): Promise<void>;
}

/** A private Redis and the key prefix of this file's keys (the stores under test are real). */
interface TestRedis {
  server: RedisHandle;
  redis: Redis;
  keyPrefix: string;
}
let h: TestRedis;
let gw: AssetGateway;
const opened: AssetGateway[] = [];
let otherKey: string;
let listOnlyKey: string;

/**
 * A gateway serving the assets routes with real dependencies: a private Redis, the real
 * authenticator over the API key store, a local directory object store, on a loopback port.
 */
async function startAssetGateway(
  opts: Partial<Pick<AssetServiceOptions, 'maxBytes' | 'publicBaseUrl' | 'quotaBytes' | 'quotaCount'>> & {
    ttlSeconds?: number;
  } = {},
): Promise<AssetGateway> {
  const keys = createKeys(h.keyPrefix);
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-assets-'));
  const objects = createLocalDirStore(dir);
  const assets = createAssetService({
    store: createAssetStore(h.redis, keys, { ttlSeconds: opts.ttlSeconds ?? 3600 }),
    objects,
    signingSecret: SECRET,
    ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
    ...(opts.publicBaseUrl ? { publicBaseUrl: opts.publicBaseUrl } : {}),
    ...(opts.quotaBytes !== undefined ? { quotaBytes: opts.quotaBytes } : {}),
    ...(opts.quotaCount !== undefined ? { quotaCount: opts.quotaCount } : {}),
  });
  const auth = createAuthenticator({ keyStore: createApiKeyStore(h.redis, keys), cacheMs: 0, ncaId: 'test-nca' });
  const app = new Hono();
  app.route('/', assetRoutes({ assets, auth }));
  app.notFound((c) => problemResponse(404, `No route for ${c.req.method} ${c.req.path}`, { instance: c.req.path }));
  app.onError((err, c) => errorToProblem(err, c.req.path).response);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const g: AssetGateway = {
    url: `http://127.0.0.1:${port}`,
    assets,
    objects,
    dir,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
  opened.push(g);
  return g;
}

const ADMIN_KEY = `nvapi-test-${crypto.randomUUID()}`;
/** A request as the operator's admin key makes it. */
function gfetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, ...(init.headers as Record<string, string> | undefined) };
  return fetch(url, { ...init, headers });
}

beforeAll(async () => {
  const server = await startRedis();
  h = { server, redis: new Redis(server.url), keyPrefix: `nvcf-assets-test-${randomBytes(4).toString('hex')}` };
  const keyStore = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
  await keyStore.create({ name: 'admin', scopes: [...SCOPES], secret: ADMIN_KEY });
  otherKey = (await keyStore.create({ name: 'other', scopes: ['invoke_function'] })).key;
  listOnlyKey = (await keyStore.create({ name: 'lister', scopes: ['list_functions'] })).key;
  gw = await startAssetGateway();
});
afterAll(async () => {
  await Promise.all(opened.map((g) => g.close()));
  h?.redis.disconnect();
  await h?.server.close();
});

interface Created {
  assetId: string;
  uploadUrl: string;
  contentType: string;
  description: string;
}

async function createAsset(g: AssetGateway, body: object, headers: Record<string, string> = {}): Promise<Created> {
  const res = await gfetch(`${g.url}/v2/nvcf/assets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Created;
}

const put = (url: string, body: Uint8Array | string, headers: Record<string, string>) =>
  fetch(url, { method: 'PUT', headers, body });

const problemOf = async (res: Response) => {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as { status: number; title: string; detail: string };
};

/** Every file the object store holds, dot-files (sidecars, temporaries) included. */
const filesIn = async (dir: string) =>
  (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** A fresh credential (its own quota) that may create and use assets. */
const newKey = async (name: string) =>
  (await createApiKeyStore(h.redis, createKeys(h.keyPrefix)).create({ name, scopes: ['invoke_function'] })).key;

describe('assets API', () => {
  it('round trip: create → PUT → metadata → list → reference → DELETE → 404', async () => {
    const created = await createAsset(gw, { contentType: 'image/png', description: 'a small picture' });
    expect(created).toEqual({
      assetId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      uploadUrl: expect.any(String),
      contentType: 'image/png',
      description: 'a small picture',
    });
    const { assetId } = created;
    // Recorded with its creator's account (the credential's; this gateway's default account here).
    expect((await createAssetStore(h.redis, createKeys(h.keyPrefix)).get(assetId))?.ncaId).toBe('test-nca');
    const upload = new URL(created.uploadUrl);
    expect(upload.origin).toBe(gw.url);
    expect(upload.pathname).toBe(`/v2/nvcf/assets/${assetId}/upload`);
    const expires = Number(upload.searchParams.get('expires'));
    // 35 minutes (NVCF behaviour: assets).
    expect(expires - Date.now() / 1000).toBeGreaterThan(35 * 60 - 10);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(35 * 60);
    expect(upload.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Not uploaded yet: an invocation cannot name it.
    await expect(resolveAssetReferences(assetId, gw.assets)).rejects.toThrow(
      `NotFound error: failed to find asset ${assetId}`,
    );

    const bytes = randomBytes(300_000);
    // No Authorization header: the signature is the credential.
    const res = await put(created.uploadUrl, bytes, { 'content-type': 'image/png', [DESC_HEADER]: 'a small picture' });
    expect(res.status).toBe(200);
    const stored = await gw.objects.get(assetObjectKey(assetId));
    expect(stored).toMatchObject({
      size: bytes.length,
      contentType: 'image/png',
      metadata: { 'nvcf-asset-description': 'a small picture' },
    });
    expect(Buffer.concat(await stored!.body.toArray()).equals(bytes)).toBe(true);

    const meta = await gfetch(`${gw.url}/v2/nvcf/assets/${assetId.toUpperCase()}`);
    expect(meta.status).toBe(200);
    const { asset } = (await meta.json()) as { asset: Record<string, string> };
    expect(asset).toEqual({
      assetId,
      description: 'a small picture',
      contentType: 'image/png',
      createdAt: expect.any(String),
    });
    expect(Math.abs(Date.parse(asset.createdAt!) - Date.now())).toBeLessThan(60_000);

    const list = (await (await gfetch(`${gw.url}/v2/nvcf/assets`)).json()) as { assets: object[] };
    expect(list.assets).toContainEqual({ assetId, description: 'a small picture', contentType: 'image/png' });

    // The invocation header: trimmed, repeated, empty entries allowed.
    expect(await resolveAssetReferences(` ${assetId} ,, ${assetId.toUpperCase()},`, gw.assets)).toEqual([assetId]);

    const del = await gfetch(`${gw.url}/v2/nvcf/assets/${assetId}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect(await gw.objects.exists(assetObjectKey(assetId))).toBe(false);

    for (const method of ['GET', 'DELETE']) {
      const gone = await gfetch(`${gw.url}/v2/nvcf/assets/${assetId}`, { method });
      expect(gone.status).toBe(404);
      expect(await problemOf(gone)).toMatchObject({
        title: 'Not Found',
        status: 404,
        detail: `NotFound error: failed to find asset ${assetId}`,
      });
    }
    // The URL is still signed and unexpired, but the asset is gone.
    const late = await put(created.uploadUrl, 'x', { 'content-type': 'image/png', [DESC_HEADER]: 'a small picture' });
    expect(late.status).toBe(404);
    expect(await gw.objects.exists(assetObjectKey(assetId))).toBe(false);
    expect((await filesIn(gw.dir)).filter((n) => n.includes(assetId))).toEqual([]);
    await expect(resolveAssetReferences(assetId, gw.assets)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a second upload replaces the first', async () => {
    const { assetId, uploadUrl } = await createAsset(gw, { contentType: 'text/plain', description: 'notes' });
    const headers = { 'content-type': 'text/plain', [DESC_HEADER]: 'notes' };
    expect((await put(uploadUrl, 'first version, longer', headers)).status).toBe(200);
    expect((await put(uploadUrl, 'second', headers)).status).toBe(200);
    const stored = await gw.objects.get(assetObjectKey(assetId));
    expect(stored?.size).toBe(6);
    expect(await text(stored!.body)).toBe('second');
  });

  it('refuses a tampered signature, a changed header and a missing signature with 403', async () => {
    const { assetId, uploadUrl } = await createAsset(gw, { contentType: 'image/png', description: 'signed' });
    const good = { 'content-type': 'image/png', [DESC_HEADER]: 'signed' };
    const url = new URL(uploadUrl);
    const sig = url.searchParams.get('signature')!;
    const withParams = (params: Record<string, string | null>) => {
      const u = new URL(uploadUrl);
      for (const [k, v] of Object.entries(params)) {
        if (v === null) u.searchParams.delete(k);
        else u.searchParams.set(k, v);
      }
      return u.toString();
    };
    const cases: [string, string, Record<string, string>][] = [
      ['tampered signature', withParams({ signature: `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}` }), good],
      ['signature of another asset', uploadUrl.replace(assetId, crypto.randomUUID()), good],
      ['extended expiry', withParams({ expires: String(Number(url.searchParams.get('expires')) + 3600) }), good],
      ['no signature', withParams({ signature: null }), good],
      ['no query', uploadUrl.split('?')[0]!, good],
      ['changed content type', uploadUrl, { ...good, 'content-type': 'image/jpeg' }],
      ['content type with parameters', uploadUrl, { ...good, 'content-type': 'image/png; charset=binary' }],
      ['changed description', uploadUrl, { ...good, [DESC_HEADER]: 'changed' }],
      ['missing description', uploadUrl, { 'content-type': 'image/png' }],
    ];
    for (const [name, target, headers] of cases) {
      const res = await put(target, 'payload', headers);
      expect(res.status, name).toBe(403);
      const p = await problemOf(res);
      expect(p, name).toMatchObject({ title: 'Forbidden', status: 403 });
      expect(p.detail, name).toMatch(/upload URL/);
    }
    expect(await gw.objects.exists(assetObjectKey(assetId))).toBe(false);
    // Whitespace around a header value is not part of it (HTTP strips it too).
    expect((await put(uploadUrl, 'ok', { 'content-type': 'image/png', [DESC_HEADER]: ' signed ' })).status).toBe(200);
  });

  it('refuses an expired upload URL', async () => {
    const { assetId } = await createAsset(gw, { contentType: 'application/octet-stream', description: '' });
    const expired = signUrl(SECRET, {
      baseUrl: gw.url,
      method: 'PUT',
      path: uploadPath(assetId),
      expires: Math.floor(Date.now() / 1000) - 1,
      headers: { 'content-type': 'application/octet-stream', [DESC_HEADER]: '' },
    });
    const res = await put(expired, 'late', { 'content-type': 'application/octet-stream' });
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toBe('the upload URL has expired');
    expect(await gw.objects.exists(assetObjectKey(assetId))).toBe(false);
    // The same request signed with a future expiry goes through (an empty description may be left out).
    const fresh = expired.replace(/expires=\d+&signature=.*/, '');
    const valid = signUrl(SECRET, {
      baseUrl: gw.url,
      method: 'PUT',
      path: uploadPath(assetId),
      expires: Math.floor(Date.now() / 1000) + 60,
      headers: { 'content-type': 'application/octet-stream', [DESC_HEADER]: '' },
    });
    expect(valid.startsWith(fresh)).toBe(true);
    expect((await put(valid, 'in time', { 'content-type': 'application/octet-stream' })).status).toBe(200);
  });

  it('refuses an oversized upload with 413 and stores nothing', async () => {
    const small = await startAssetGateway({ maxBytes: 64 * 1024 });
    const { assetId, uploadUrl } = await createAsset(small, {
      contentType: 'application/octet-stream',
      description: 'big',
    });
    const headers = { 'content-type': 'application/octet-stream', [DESC_HEADER]: 'big' };

    const declared = await put(uploadUrl, new Uint8Array(64 * 1024 + 1), headers);
    expect(declared.status).toBe(413);
    expect(await problemOf(declared)).toMatchObject({ title: 'Payload Too Large', status: 413 });

    // Chunked, 4 MiB still on its way: no Content-Length, refused once the limit is passed.
    const chunk = new Uint8Array(64 * 1024);
    let sent = 0;
    const streamed = await fetch(uploadUrl, {
      method: 'PUT',
      headers,
      duplex: 'half',
      body: new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent++ < 64) c.enqueue(chunk);
          else c.close();
        },
      }),
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await small.objects.exists(assetObjectKey(assetId))).toBe(false);
    expect(await filesIn(small.dir)).toEqual([]);

    // Exactly the limit is fine.
    expect((await put(uploadUrl, new Uint8Array(64 * 1024), headers)).status).toBe(200);
    expect((await small.objects.get(assetObjectKey(assetId)))?.size).toBe(64 * 1024);
    const after = await gfetch(`${small.url}/v2/nvcf/assets/${assetId}`);
    expect(after.status).toBe(200);
  });

  it('holds each credential to its byte quota; its own replaced bytes and deleted assets free it', async () => {
    const g = await startAssetGateway({ quotaBytes: 1000 });
    const auth = bearer(await newKey('quota-bytes'));
    const headers = { 'content-type': 'application/octet-stream', [DESC_HEADER]: 'q' };
    const asset = () => createAsset(g, { contentType: 'application/octet-stream', description: 'q' }, auth);
    const a = await asset();
    expect((await put(a.uploadUrl, new Uint8Array(600), headers)).status).toBe(200);
    const b = await asset();

    // Declared length: refused before a byte is read.
    const declared = await put(b.uploadUrl, new Uint8Array(500), headers);
    expect(declared.status).toBe(403);
    expect((await problemOf(declared)).detail).toBe(
      'asset storage quota exceeded: your assets hold 600 of 1000 bytes and this upload needs 500; ' +
        'delete assets (DELETE /v2/nvcf/assets/{assetId}) or wait for them to expire',
    );
    // Chunked: cut once it passes what is left.
    let sent = 0;
    const streamed = await fetch(b.uploadUrl, {
      method: 'PUT',
      headers,
      duplex: 'half',
      body: new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent++ < 5) c.enqueue(new Uint8Array(100));
          else c.close();
        },
      }),
    } as RequestInit);
    expect(streamed.status).toBe(403);
    expect((await problemOf(streamed)).detail).toMatch(
      /hold 600 of 1000 bytes and this upload passes the 400 bytes left/,
    );
    expect(await g.objects.exists(assetObjectKey(b.assetId))).toBe(false);
    await expect(g.assets.resolve([b.assetId])).rejects.toMatchObject({ code: 'NOT_FOUND' });

    // Re-uploading an asset replaces its bytes: only the others' count.
    expect((await put(a.uploadUrl, new Uint8Array(900), headers)).status).toBe(200);
    expect((await put(b.uploadUrl, new Uint8Array(100), headers)).status).toBe(200);
    expect((await put(b.uploadUrl, new Uint8Array(101), headers)).status).toBe(403);
    expect((await g.objects.get(assetObjectKey(b.assetId)))?.size).toBe(100); // the refused upload left it alone
    // Another credential has its own quota.
    const theirs = await createAsset(g, { contentType: 'a/b', description: '' }, bearer(await newKey('quota-other')));
    expect(
      (await put(theirs.uploadUrl, new Uint8Array(1000), { 'content-type': 'a/b', [DESC_HEADER]: '' })).status,
    ).toBe(200);
    // Deleting frees quota.
    expect((await gfetch(`${g.url}/v2/nvcf/assets/${a.assetId}`, { method: 'DELETE', headers: auth })).status).toBe(
      204,
    );
    expect((await put(b.uploadUrl, new Uint8Array(1000), headers)).status).toBe(200);
  });

  it('holds each credential to its count quota; deleting frees a slot', async () => {
    const g = await startAssetGateway({ quotaCount: 2 });
    const auth = bearer(await newKey('quota-count'));
    const create = () =>
      gfetch(`${g.url}/v2/nvcf/assets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ contentType: 'a/b' }),
      });
    const first = (await (await create()).json()) as Created;
    expect((await create()).status).toBe(200);
    const third = await create();
    expect(third.status).toBe(403);
    expect((await problemOf(third)).detail).toBe(
      'asset quota exceeded: you have 2 assets (the limit); delete assets (DELETE /v2/nvcf/assets/{assetId}) or wait for them to expire',
    );
    const list = (await (await gfetch(`${g.url}/v2/nvcf/assets`, { headers: auth })).json()) as { assets: unknown[] };
    expect(list.assets).toHaveLength(2);
    await gfetch(`${g.url}/v2/nvcf/assets/${first.assetId}`, { method: 'DELETE', headers: auth });
    expect((await create()).status).toBe(200);
  });

  it('needs a credential with invoke_function everywhere but the upload', async () => {
    const { assetId } = await createAsset(gw, { contentType: 'text/plain', description: 'x' });
    const calls: [string, string][] = [
      ['POST', '/v2/nvcf/assets'],
      ['GET', '/v2/nvcf/assets'],
      ['GET', `/v2/nvcf/assets/${assetId}`],
      ['DELETE', `/v2/nvcf/assets/${assetId}`],
    ];
    for (const [method, path] of calls) {
      const init = {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{"contentType":"a/b"}' : null,
      };
      const anonymous = await fetch(`${gw.url}${path}`, init);
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
      expect(await problemOf(anonymous)).toMatchObject({ detail: 'client is unauthorized' });
      const wrongScope = await fetch(`${gw.url}${path}`, {
        ...init,
        headers: { ...init.headers, ...bearer(listOnlyKey) },
      });
      expect(wrongScope.status, `${method} ${path}`).toBe(403);
    }
    expect((await gfetch(`${gw.url}/v2/nvcf/assets/${assetId}`)).status).toBe(200);
  });

  it('keeps each key to its own assets', async () => {
    const mine = await createAsset(gw, { contentType: 'text/plain', description: 'private' });
    await put(mine.uploadUrl, 'secret bytes', { 'content-type': 'text/plain', [DESC_HEADER]: 'private' });
    const theirs = await createAsset(gw, { contentType: 'text/plain', description: 'theirs' }, bearer(otherKey));

    const otherList = (await (await fetch(`${gw.url}/v2/nvcf/assets`, { headers: bearer(otherKey) })).json()) as {
      assets: { assetId: string }[];
    };
    expect(otherList.assets.map((a) => a.assetId)).toEqual([theirs.assetId]);
    const myList = (await (await gfetch(`${gw.url}/v2/nvcf/assets`)).json()) as { assets: { assetId: string }[] };
    expect(myList.assets.map((a) => a.assetId)).toContain(mine.assetId);
    expect(myList.assets.map((a) => a.assetId)).not.toContain(theirs.assetId);

    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${gw.url}/v2/nvcf/assets/${mine.assetId}`, { method, headers: bearer(otherKey) });
      expect(res.status).toBe(404);
      expect((await problemOf(res)).detail).toBe(`NotFound error: failed to find asset ${mine.assetId}`);
    }
    expect(await gw.objects.exists(assetObjectKey(mine.assetId))).toBe(true);
    // With the caller as owner, an invocation cannot name another key's asset either.
    const otherId = (await createApiKeyStore(h.redis, createKeys(h.keyPrefix)).verify(otherKey))!.id;
    const other = principalKey({ kind: 'api-key', subject: otherId, ncaId: 'self-hosted' });
    await expect(resolveAssetReferences(mine.assetId, gw.assets, { owner: other })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('answers 400 for a non-UUID id and an invalid body', async () => {
    for (const [method, path] of [
      ['GET', '/v2/nvcf/assets/not-a-uuid'],
      ['DELETE', '/v2/nvcf/assets/not-a-uuid'],
      ['PUT', '/v2/nvcf/assets/not-a-uuid/upload?expires=1&signature=x'],
    ] as const) {
      const res = await gfetch(`${gw.url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect((await problemOf(res)).detail).toMatch(/not a UUID/);
    }
    for (const body of [
      'not json',
      '{}',
      '{"contentType":""}',
      '{"contentType":"image/png","description":"line\\nbreak"}',
      '{"contentType":"image/pngé"}',
      '{"contentType":"image/png","description":5}',
      JSON.stringify({ contentType: 'a/b', description: 'x'.repeat(2049) }),
    ]) {
      const res = await gfetch(`${gw.url}/v2/nvcf/assets`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, body).toBe(400);
    }
    // The description may be left out.
    expect(await createAsset(gw, { contentType: 'image/png' })).toMatchObject({ description: '' });
  });

  it('parses NVCF-INPUT-ASSET-REFERENCES', async () => {
    expect(await resolveAssetReferences(undefined, gw.assets)).toEqual([]);
    expect(await resolveAssetReferences('', gw.assets)).toEqual([]);
    expect(await resolveAssetReferences(' , ', gw.assets)).toEqual([]);
    const err = await resolveAssetReferences('not-a-uuid', gw.assets).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).httpStatus).toBe(400);
    const unknown = crypto.randomUUID();
    const missing = await resolveAssetReferences(`${unknown}`, gw.assets).catch((e: unknown) => e);
    expect((missing as AppError).httpStatus).toBe(404);
    expect((missing as AppError).message).toBe(`NotFound error: failed to find asset ${unknown}`);

    const a = await createAsset(gw, { contentType: 'a/b', description: '' });
    const b = await createAsset(gw, { contentType: 'a/b', description: '' });
    for (const x of [a, b]) expect((await put(x.uploadUrl, 'x', { 'content-type': 'a/b' })).status).toBe(200);
    // Two header lines arrive joined with ", ".
    expect(await resolveAssetReferences(`${b.assetId}, ${a.assetId}, ${b.assetId}`, gw.assets)).toEqual([
      b.assetId,
      a.assetId,
    ]);
    await expect(resolveAssetReferences(`${a.assetId},${unknown}`, gw.assets)).rejects.toThrow(unknown);
  });

  it('builds upload URLs on the configured public base URL', async () => {
    const proxied = await startAssetGateway({ publicBaseUrl: 'https://nvcf.example.com/prefix/' });
    const created = await createAsset(proxied, { contentType: 'a/b', description: 'd' });
    expect(created.uploadUrl).toMatch(
      new RegExp(
        `^https://nvcf\\.example\\.com/prefix/v2/nvcf/assets/${created.assetId}/upload\\?expires=\\d+&signature=`,
      ),
    );
    // A reverse proxy strips the prefix: the signature covers the path the gateway routes.
    const direct = created.uploadUrl.replace('https://nvcf.example.com/prefix', proxied.url);
    expect((await put(direct, 'via proxy', { 'content-type': 'a/b', [DESC_HEADER]: 'd' })).status).toBe(200);
    expect(() => createAssetService({ ...optsOf(proxied), publicBaseUrl: 'ftp://x' })).toThrow(/public base URL/);
  });

  it('reclaims the bytes of expired assets', async () => {
    const short = await startAssetGateway({ ttlSeconds: 1 });
    const created = await createAsset(short, { contentType: 'a/b', description: 'brief' });
    expect(
      (await put(created.uploadUrl, 'short-lived', { 'content-type': 'a/b', [DESC_HEADER]: 'brief' })).status,
    ).toBe(200);
    expect(await short.assets.sweepExpired()).toBe(0);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await gfetch(`${short.url}/v2/nvcf/assets/${created.assetId}`)).status).toBe(404);
    expect(await short.assets.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await short.objects.exists(assetObjectKey(created.assetId))).toBe(false);
    expect(await filesIn(short.dir)).toEqual([]);
  });
});

function optsOf(g: AssetGateway): AssetServiceOptions {
  return {
    store: createAssetStore(h.redis, createKeys(h.keyPrefix)),
    objects: g.objects,
    signingSecret: SECRET,
  };
}
