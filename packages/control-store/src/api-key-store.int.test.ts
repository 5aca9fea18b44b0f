import { SCOPES } from '@nvcf/protocol';
import { createKeys, type Keys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { v4 as uuidv4 } from 'uuid';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ApiKeyStore, createApiKeyStore } from './api-key-store.ts';

const db = usePrivateRedis();

let keys: Keys;
let store: ApiKeyStore;

beforeEach(() => {
  keys = createKeys(`t${uuidv4().slice(0, 8)}`);
  store = createApiKeyStore(db.redis, keys);
});

const secret = () => `nvapi-boot-${uuidv4()}`;

describe('api key store', () => {
  it('keeps the account a key was made for; a key without one (stored before accounts) reads without it', async () => {
    const { key, record } = await store.create({ name: 'b', scopes: ['invoke_function'], ncaId: 'team-b' });
    expect(record.ncaId).toBe('team-b');
    expect((await store.verify(key))?.ncaId).toBe('team-b');
    const legacy = { id: 'legacy', name: 'old', scopes: ['invoke_function'], createdAt: new Date().toISOString() };
    await db.redis.hset(keys.apiKeys, 'legacy', JSON.stringify(legacy));
    expect((await store.list()).find((r) => r.id === 'legacy')).toEqual(legacy);
  });

  it('reads a record holding a scope this release does not know (a newer gateway wrote it) without that scope', async () => {
    const { key, record } = await store.create({ name: 'next', scopes: ['invoke_function'] });
    const [field] = (await db.redis.hkeys(keys.apiKeys)) as [string];
    const stored = JSON.parse((await db.redis.hget(keys.apiKeys, field)) ?? '{}') as { scopes: string[] };
    await db.redis.hset(
      keys.apiKeys,
      field,
      JSON.stringify({ ...stored, scopes: ['invoke_function', 'from_the_future'] }),
    );
    expect(await store.verify(key)).toEqual(record);
    expect((await store.list()).map((r) => r.scopes)).toEqual([['invoke_function']]);
  });

  it('creates keys shown once, verifies them by hash and revokes them', async () => {
    const { key, record } = await store.create({ name: 'ci', scopes: ['invoke_function', 'invoke_function'] });
    expect(key).toMatch(/^nvapi-[A-Za-z0-9_-]{43}$/);
    expect(record.scopes).toEqual(['invoke_function']);
    expect(await store.verify(key)).toEqual(record);
    expect(JSON.stringify(await db.redis.hvals(keys.apiKeys))).not.toContain(key);
    expect(await store.revoke(record.id)).toBe(true);
    expect(await store.verify(key)).toBeUndefined();
    expect(await store.revoke('no-such-id')).toBe(false);
  });

  it('never re-creates a key from a secret it registered before, revoked or not', async () => {
    const key = secret();
    const { record } = await store.create({ name: 'mine', scopes: ['invoke_function'], secret: key });
    await expect(store.create({ name: 'again', scopes: ['invoke_function'], secret: key })).rejects.toThrow(/already/);
    await store.revoke(record.id);
    await expect(store.create({ name: 'again', scopes: ['invoke_function'], secret: key })).rejects.toThrow(/already/);
    expect(await store.verify(key)).toBeUndefined();
    expect(await store.list()).toHaveLength(1);
  });

  it('bootstraps a key once: a revoked bootstrap key is never created again', async () => {
    const key = secret();
    const first = await store.bootstrap({ name: 'bootstrap-admin', scopes: ['list_functions'], secret: key });
    expect(first).toMatchObject({ created: true, record: { name: 'bootstrap-admin', scopes: ['list_functions'] } });
    const id = first.record?.id;
    expect((await store.verify(key))?.id).toBe(id);

    // Another start (or another gateway) keeps the same key, with the scopes it is given now.
    const again = await store.bootstrap({ name: 'bootstrap-admin', scopes: [...SCOPES], secret: key });
    expect(again).toMatchObject({ created: false, record: { id, createdAt: first.record?.createdAt } });
    expect((await store.verify(key))?.scopes).toEqual([...SCOPES]);

    await store.revoke(id ?? '');
    const afterRevoke = await store.bootstrap({ name: 'bootstrap-admin', scopes: [...SCOPES], secret: key });
    expect(afterRevoke.created).toBe(false);
    expect(afterRevoke.record?.revokedAt).toBeDefined();
    expect(await store.verify(key)).toBeUndefined();
    expect(await store.list()).toHaveLength(1);
  });

  it('creates a bootstrap key exactly once when gateways start together', async () => {
    const key = secret();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => store.bootstrap({ name: 'bootstrap-admin', scopes: [...SCOPES], secret: key })),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.record?.id)).size).toBe(1);
    expect(results[0]?.record?.scopes).toEqual([...SCOPES]);
    expect(await store.list()).toHaveLength(1);
  });
});
