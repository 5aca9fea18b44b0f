import { createKeys, type Keys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { v4 as uuidv4 } from 'uuid';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  AssetQuotaError,
  type AssetStore,
  assetObjectKey,
  createAssetStore,
  DEFAULT_ASSET_TTL_SECONDS,
} from './asset-store.ts';

const db = usePrivateRedis();

let keys: Keys;
let store: AssetStore;

beforeEach(() => {
  keys = createKeys(`t${uuidv4().slice(0, 8)}`);
  store = createAssetStore(db.redis, keys, { ttlSeconds: 120 });
});

const newAsset = (ownerSubject = 'alice', description = 'd') =>
  store.create({ contentType: 'image/png', description, ncaId: 'nca', ownerSubject });

describe('asset store', () => {
  it('creates, reads, marks uploaded and deletes a record that expires after the TTL', async () => {
    const a = await newAsset();
    expect(a).toMatchObject({ contentType: 'image/png', description: 'd', ncaId: 'nca', ownerSubject: 'alice' });
    expect(a.assetId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(a.createdAt)).toBeGreaterThan(Date.now() - 5000);
    expect(await store.get(a.assetId)).toEqual(a);
    const ttl = await db.redis.ttl(keys.asset(a.assetId));
    expect(ttl).toBeGreaterThan(110);
    expect(ttl).toBeLessThanOrEqual(120);

    const up = await store.markUploaded(a.assetId, 42);
    expect(up).toMatchObject({ ...a, size: 42 });
    expect(up?.uploadedAt).toBeDefined();
    expect(await store.get(a.assetId)).toEqual(up);
    expect(await db.redis.ttl(keys.asset(a.assetId))).toBeGreaterThan(110); // the upload kept the expiry

    expect(await store.delete(a.assetId)).toEqual(up);
    expect(await store.get(a.assetId)).toBeUndefined();
    expect(await store.delete(a.assetId)).toBeUndefined();
    expect(await store.markUploaded(a.assetId, 1)).toBeUndefined(); // never resurrected
    expect(await store.get(a.assetId)).toBeUndefined();
    expect(await store.expired(10, Date.now() + 1_000_000)).toEqual([]); // deleted: nothing left to reclaim
  });

  it('lists an owner’s own live assets, oldest first', async () => {
    // "Oldest" is by creation time (ms): two assets made in the same millisecond have no order. On a fast
    // machine they were, and the test failed: each is made in a millisecond of its own.
    const nextMillisecond = async () => {
      const t = Date.now();
      while (Date.now() === t) await new Promise((r) => setTimeout(r, 1));
    };
    const a1 = await newAsset('alice', 'one');
    await nextMillisecond();
    const b1 = await newAsset('bob', 'bob');
    await nextMillisecond();
    const a2 = await newAsset('alice', 'two');
    expect((await store.list('alice')).map((a) => a.assetId)).toEqual([a1.assetId, a2.assetId]);
    expect((await store.list('bob')).map((a) => a.assetId)).toEqual([b1.assetId]);
    expect(await store.list('carol')).toEqual([]);
    await store.delete(a1.assetId);
    expect((await store.list('alice')).map((a) => a.assetId)).toEqual([a2.assetId]);
    // A record Redis expired drops out of the list even before its index entry does.
    await db.redis.del(keys.asset(a2.assetId));
    expect(await store.list('alice')).toEqual([]);
  });

  it('hands out the ids of expired assets until they are forgotten', async () => {
    const short = createAssetStore(db.redis, keys, { ttlSeconds: 1 });
    const a = await short.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'o' });
    const b = await short.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'o' });
    expect(await short.expired(10)).toEqual([]);
    const later = Date.now() + 1500;
    expect((await short.expired(10, later)).sort()).toEqual([a.assetId, b.assetId].sort());
    expect(await short.expired(1, later)).toHaveLength(1);
    await short.forgetExpired([a.assetId, b.assetId]);
    expect(await short.expired(10, later)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await short.get(a.assetId)).toBeUndefined();
    expect(await short.list('o')).toEqual([]);
  });

  it('reads many records in one call and refuses a duplicate id', async () => {
    const a = await newAsset();
    const missing = uuidv4();
    expect(await store.getMany([a.assetId, missing, a.assetId])).toEqual([a, undefined, a]);
    expect(await store.getMany([])).toEqual([]);
    await expect(
      store.create({ assetId: a.assetId, contentType: 'x/y', description: '', ncaId: 'n', ownerSubject: 'mallory' }),
    ).rejects.toThrow(/already exists/);
    expect(await store.get(a.assetId)).toEqual(a);
    expect(await store.list('mallory')).toEqual([]);
  });

  it('has NVCF’s defaults and object keys', () => {
    expect(DEFAULT_ASSET_TTL_SECONDS).toBe(86_400);
    expect(createAssetStore(db.redis, keys).ttlSeconds).toBe(86_400);
    expect(() => createAssetStore(db.redis, keys, { ttlSeconds: 0 })).toThrow();
    expect(assetObjectKey('abc')).toBe('assets/abc');
  });
});

describe('per-owner quota', () => {
  it('sums an owner’s live uploaded bytes; refuses an upload past the byte quota and unmarks it', async () => {
    const quota = { bytes: 100 };
    const a = await newAsset('alice');
    const b = await newAsset('alice');
    const other = await newAsset('bob');
    await store.markUploaded(other.assetId, 90, quota); // bob's bytes are bob's
    expect(await store.markUploaded(a.assetId, 60, quota)).toMatchObject({ size: 60 });
    expect(await store.usage('alice')).toEqual({ bytes: 60, count: 2 });
    expect(await store.usage('alice', a.assetId)).toEqual({ bytes: 0, count: 1 });
    // Re-uploading an asset replaces its bytes: its old size does not count against it.
    expect(await store.markUploaded(a.assetId, 100, quota)).toMatchObject({ size: 100 });
    expect(await store.markUploaded(a.assetId, 60, quota)).toMatchObject({ size: 60 });

    const err = await store.markUploaded(b.assetId, 41, quota).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AssetQuotaError);
    expect(err).toMatchObject({ kind: 'bytes', used: 60, limit: 100 });
    const refused = await store.get(b.assetId);
    expect(refused?.uploadedAt).toBeUndefined();
    expect(refused?.size).toBeUndefined();
    expect(await store.markUploaded(b.assetId, 40, quota)).toMatchObject({ size: 40 });
    expect(await store.usage('alice')).toEqual({ bytes: 100, count: 2 });
    // Without a quota nothing is checked.
    expect(await store.markUploaded(b.assetId, 1000)).toMatchObject({ size: 1000 });
  });

  it('lets only one of two concurrent uploads that together pass the quota through', async () => {
    const quota = { bytes: 100 };
    const [a, b] = await Promise.all([newAsset('alice'), newAsset('alice')]);
    const outcomes = await Promise.allSettled([
      store.markUploaded(a.assetId, 70, quota),
      store.markUploaded(b.assetId, 70, quota),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof AssetQuotaError)).toHaveLength(1);
    expect((await store.usage('alice')).bytes).toBe(70);
  });

  it('deleting or expiring assets frees quota', async () => {
    const quota = { bytes: 100, count: 2 };
    const a = await newAsset('alice');
    await store.markUploaded(a.assetId, 100, quota);
    const b = await store.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'alice' }, quota);
    await expect(store.markUploaded(b.assetId, 1, quota)).rejects.toBeInstanceOf(AssetQuotaError);
    await store.delete(a.assetId);
    expect(await store.markUploaded(b.assetId, 100, quota)).toMatchObject({ size: 100 });

    const short = createAssetStore(db.redis, keys, { ttlSeconds: 1 });
    const d = await short.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'carol' });
    await short.markUploaded(d.assetId, 100, quota);
    const c = await newAsset('carol'); // created last: the owner's index lives as long as it
    await expect(store.markUploaded(c.assetId, 1, quota)).rejects.toBeInstanceOf(AssetQuotaError);
    // Wait for Redis to expire the record: the index entry (score = expiry) stops counting with it.
    while (await short.get(d.assetId)) await new Promise((r) => setTimeout(r, 100));
    expect(await store.usage('carol')).toEqual({ bytes: 0, count: 1 });
    expect(await store.markUploaded(c.assetId, 100, quota)).toMatchObject({ size: 100 });
  });

  it('refuses a create past the count quota, storing nothing; deletion frees a slot', async () => {
    const quota = { count: 2 };
    const mk = () => store.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'dave' }, quota);
    const a = await mk();
    await mk();
    const err = await mk().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AssetQuotaError);
    expect(err).toMatchObject({ kind: 'count', used: 2, limit: 2 });
    expect(await store.list('dave')).toHaveLength(2);
    expect(await store.expired(10, Date.now() + 1_000_000)).toHaveLength(2);
    await store.delete(a.assetId);
    await mk();
    expect(await store.list('dave')).toHaveLength(2);
    // Other owners are not affected.
    await store.create({ contentType: 'a/b', description: '', ncaId: 'n', ownerSubject: 'erin' }, quota);
  });
});
