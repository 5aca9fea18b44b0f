import { type RedisHandle, startRedis } from '@nvcf/testing';
import type { Redis } from 'ioredis';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AssetStore, assetObjectKey, createAssetStore, DEFAULT_ASSET_TTL_SECONDS } from './asset-store.ts';
import { createKeys, type Keys } from './keys.ts';
import { createRedis } from './redis-connection.ts';

let server: RedisHandle;
let redis: Redis;
let keys: Keys;
let store: AssetStore;

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});
beforeEach(() => {
  keys = createKeys(`t${uuidv4().slice(0, 8)}`);
  store = createAssetStore(redis, keys, { ttlSeconds: 120 });
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
    const ttl = await redis.ttl(keys.asset(a.assetId));
    expect(ttl).toBeGreaterThan(110);
    expect(ttl).toBeLessThanOrEqual(120);

    const up = await store.markUploaded(a.assetId, 42);
    expect(up).toMatchObject({ ...a, size: 42 });
    expect(up?.uploadedAt).toBeDefined();
    expect(await store.get(a.assetId)).toEqual(up);
    expect(await redis.ttl(keys.asset(a.assetId))).toBeGreaterThan(110); // the upload kept the expiry

    expect(await store.delete(a.assetId)).toEqual(up);
    expect(await store.get(a.assetId)).toBeUndefined();
    expect(await store.delete(a.assetId)).toBeUndefined();
    expect(await store.markUploaded(a.assetId, 1)).toBeUndefined(); // never resurrected
    expect(await store.get(a.assetId)).toBeUndefined();
    expect(await store.expired(10, Date.now() + 1_000_000)).toEqual([]); // deleted: nothing left to reclaim
  });

  it('lists an owner’s own live assets, oldest first', async () => {
    const a1 = await newAsset('alice', 'one');
    const b1 = await newAsset('bob', 'bob');
    const a2 = await newAsset('alice', 'two');
    expect((await store.list('alice')).map((a) => a.assetId)).toEqual([a1.assetId, a2.assetId]);
    expect((await store.list('bob')).map((a) => a.assetId)).toEqual([b1.assetId]);
    expect(await store.list('carol')).toEqual([]);
    await store.delete(a1.assetId);
    expect((await store.list('alice')).map((a) => a.assetId)).toEqual([a2.assetId]);
    // A record Redis expired drops out of the list even before its index entry does.
    await redis.del(keys.asset(a2.assetId));
    expect(await store.list('alice')).toEqual([]);
  });

  it('hands out the ids of expired assets until they are forgotten', async () => {
    const short = createAssetStore(redis, keys, { ttlSeconds: 1 });
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
    expect(createAssetStore(redis, keys).ttlSeconds).toBe(86_400);
    expect(() => createAssetStore(redis, keys, { ttlSeconds: 0 })).toThrow();
    expect(assetObjectKey('abc')).toBe('assets/abc');
  });
});
