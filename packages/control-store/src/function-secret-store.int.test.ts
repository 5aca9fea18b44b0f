import { randomBytes, randomUUID } from 'node:crypto';
import { createKeys, type Keys, type RedisClient } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFunctionSecretStore, type FunctionSecretStore, type VersionRef } from './function-secret-store.ts';
import { createSecretCipher, SecretDecryptError } from './secret-cipher.ts';

const db = usePrivateRedis();

let keys: Keys;
let store: FunctionSecretStore;
const key = randomBytes(32);

beforeEach(() => {
  keys = createKeys(`t${randomUUID().slice(0, 8)}`);
  store = createFunctionSecretStore(db.redis, keys, createSecretCipher({ key }));
});

const newRef = (): VersionRef => ({ functionId: randomUUID(), versionId: randomUUID() });
const PLAINTEXT = 'sk-live-the-plaintext-value-7f3a';

/** Every byte this key space holds in Redis (DUMP: the stored serialization, whatever the type). */
async function everyStoredByte(): Promise<Buffer> {
  const names = await db.redis.keys(`${keys.prefix}:*`);
  const dumps = await Promise.all(names.map((name) => db.redis.dumpBuffer(name)));
  return Buffer.concat([...names.map((n) => Buffer.from(n)), ...dumps.flatMap((d) => (d ? [d] : []))]);
}

describe('function secret store', () => {
  it('stores a version’s set encrypted: no byte in Redis holds a value or a name', async () => {
    const ref = newRef();
    await store.replace(ref, { OPENAI_API_KEY: PLAINTEXT, DB_PASSWORD: 'hunter2-hunter2' });
    expect(await store.read(ref)).toEqual({ OPENAI_API_KEY: PLAINTEXT, DB_PASSWORD: 'hunter2-hunter2' });
    const stored = await everyStoredByte();
    expect(stored.length).toBeGreaterThan(0);
    for (const plain of [PLAINTEXT, 'hunter2', 'OPENAI_API_KEY', 'DB_PASSWORD']) {
      expect(stored.includes(Buffer.from(plain)), plain).toBe(false);
    }
    expect(await db.redis.get(keys.functionSecrets(ref.versionId))).toMatch(/^v1:[0-9a-f]{8}:/);
  });

  it('replaces the whole set; an empty set and remove() delete it', async () => {
    const ref = newRef();
    expect(await store.read(ref)).toEqual({});
    await store.replace(ref, { A: '1', B: '2' });
    await store.replace(ref, { C: '3' });
    expect(await store.read(ref)).toEqual({ C: '3' });
    await store.replace(ref, {});
    expect(await db.redis.exists(keys.functionSecrets(ref.versionId))).toBe(0);
    await store.replace(ref, { D: '4' });
    await store.remove(ref.versionId);
    expect(await store.read(ref)).toEqual({});
  });

  it('refuses a set moved to another version’s key', async () => {
    const a = newRef();
    const b = newRef();
    await store.replace(a, { A: PLAINTEXT });
    await db.redis.set(
      keys.functionSecrets(b.versionId),
      (await db.redis.get(keys.functionSecrets(a.versionId))) ?? '',
    );
    await expect(store.read(b)).rejects.toThrow(SecretDecryptError);
    // Same version id under another function: bound too.
    await expect(store.read({ ...a, functionId: randomUUID() })).rejects.toThrow(SecretDecryptError);
  });

  it('without a key: deletes, refuses to write or read', async () => {
    const ref = newRef();
    await store.replace(ref, { A: '1' });
    const keyless = createFunctionSecretStore(db.redis, keys, undefined);
    expect(keyless.enabled).toBe(false);
    await expect(keyless.replace(ref, { A: '2' })).rejects.toThrow(/NVCF_SECRETS_KEY/);
    await expect(keyless.read(ref)).rejects.toThrow(/NVCF_SECRETS_KEY/);
    await keyless.remove(ref.versionId);
    expect(await store.read(ref)).toEqual({});
  });

  it('re-encrypts under a new key, reading with the previous one; a set replaced meanwhile wins', async () => {
    const ref = newRef();
    await store.replace(ref, { A: PLAINTEXT });
    const newKey = randomBytes(32);
    const rotating = createFunctionSecretStore(db.redis, keys, createSecretCipher({ key: newKey, previousKey: key }));
    expect(await rotating.read(ref)).toEqual({ A: PLAINTEXT });
    expect(await rotating.reencrypt(ref)).toBe(true);
    expect(await rotating.reencrypt(ref)).toBe(false); // already under the new key
    const onlyNew = createFunctionSecretStore(db.redis, keys, createSecretCipher({ key: newKey }));
    expect(await onlyNew.read(ref)).toEqual({ A: PLAINTEXT });
    await expect(store.read(ref)).rejects.toThrow(SecretDecryptError); // the old key alone no longer opens it
    expect(await rotating.reencrypt(newRef())).toBe(false); // no set: nothing to do

    // A PUT between the rotation's read and its write is kept.
    const raced = newRef();
    await store.replace(raced, { A: 'old' });
    const original = db.redis.get.bind(db.redis);
    const spy = async (k: string) => {
      const value = await original(k);
      await onlyNew.replace(raced, { A: 'new' });
      return value;
    };
    const racing = createFunctionSecretStore(
      Object.assign(Object.create(db.redis), { get: spy }) as RedisClient,
      keys,
      createSecretCipher({ key: newKey, previousKey: key }),
    );
    expect(await racing.reencrypt(raced)).toBe(false);
    expect(await onlyNew.read(raced)).toEqual({ A: 'new' });
  });
});
