import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeys, newRequestId } from './keys.ts';
import { SCRIPT_LIBRARY } from './lua-scripts.ts';
import { usePrivateRedis } from './private-redis.ts';
import { createRequestStore } from './request-store.ts';

const db = usePrivateRedis();

/** The scripts as a Redis function library: loaded on first use, and again when Redis forgot it. */

const libraries = async () =>
  ((await db.redis.call('function', 'list')) as unknown[][]).map((lib) => String(lib[lib.indexOf('library_name') + 1]));

describe('script library', () => {
  it('is loaded by the first call, and again after Redis lost it (a restart without persistence)', async () => {
    const store = createRequestStore(db.redis, createKeys(`s${randomUUID().slice(0, 8)}`), { ttlSeconds: 60 });
    const id = newRequestId(randomUUID());
    expect(await store.create(id, 'f', 'v')).toBe(true);
    expect(await libraries()).toEqual([SCRIPT_LIBRARY]);
    await db.redis.call('function', 'flush');
    expect(await libraries()).toEqual([]);
    // Calls in flight together while the library is missing: each is answered once it is back.
    const reports = await Promise.all([store.reportProgress(id, 5), store.reportProgress(id, 10)]);
    expect(reports).toEqual([true, true]);
    expect(await libraries()).toEqual([SCRIPT_LIBRARY]);
    expect(await store.take(id)).toMatchObject({ kind: 'pending', state: 'in-progress' });
  });
});
