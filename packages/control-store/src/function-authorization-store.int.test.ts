import { randomUUID } from 'node:crypto';
import { MAX_AUTHORIZED_PARTIES } from '@nvcf/protocol';
import { createKeys, type Keys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFunctionAuthorizationStore, type FunctionAuthorizationStore } from './function-authorization-store.ts';

const db = usePrivateRedis();

let keys: Keys;
let store: FunctionAuthorizationStore;

beforeEach(() => {
  keys = createKeys(`t${randomUUID().slice(0, 8)}`);
  store = createFunctionAuthorizationStore(db.redis, keys);
});

const fid = '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const v1 = '11111111-2222-4333-8444-555555555555';
const v2 = '22222222-3333-4444-8555-666666666666';

describe('function authorization store', () => {
  it('keeps the function’s parties and each version’s apart, sorted, one per account', async () => {
    expect(await store.get(fid)).toEqual({ function: [], versions: {} });
    await store.set(fid, undefined, [{ ncaId: 'zeta' }, { ncaId: 'alpha', clientId: 'c' }, { ncaId: 'zeta' }]);
    await store.set(fid, v1, [{ ncaId: 'beta' }]);
    expect(await store.get(fid)).toEqual({
      function: [{ ncaId: 'alpha', clientId: 'c' }, { ncaId: 'zeta' }],
      versions: { [v1]: [{ ncaId: 'beta' }] },
    });
    // A set replaces its own scope only.
    await store.set(fid, undefined, [{ ncaId: 'gamma' }]);
    expect(await store.get(fid)).toEqual({ function: [{ ncaId: 'gamma' }], versions: { [v1]: [{ ncaId: 'beta' }] } });
  });

  it('adds only where parties exist (a version may build on the function’s), once per account, up to the cap', async () => {
    expect(await store.add(fid, undefined, { ncaId: 'a' })).toBe('none');
    expect(await store.add(fid, v1, { ncaId: 'a' })).toBe('none');
    await store.set(fid, undefined, [{ ncaId: 'a' }]);
    expect(await store.add(fid, undefined, { ncaId: 'a' })).toBe('exists');
    expect(await store.add(fid, undefined, { ncaId: 'b' })).toBe('added');
    // The version has none of its own, but inherits the function's: it may get its own.
    expect(await store.add(fid, v1, { ncaId: 'c' })).toBe('added');
    expect(await store.add(fid, v1, { ncaId: 'c' })).toBe('exists');
    expect(await store.get(fid)).toEqual({
      function: [{ ncaId: 'a' }, { ncaId: 'b' }],
      versions: { [v1]: [{ ncaId: 'c' }] },
    });
    const many = Array.from({ length: MAX_AUTHORIZED_PARTIES }, (_, i) => ({ ncaId: `n${i}` }));
    await store.set(fid, v2, many);
    expect(await store.add(fid, v2, { ncaId: 'one-more' })).toBe('full');
  });

  it('removes a party, telling an absent one from no parties at all', async () => {
    expect(await store.remove(fid, undefined, 'a')).toBe('none');
    await store.set(fid, undefined, [{ ncaId: 'a' }, { ncaId: 'b' }]);
    expect(await store.remove(fid, v1, 'a')).toBe('none'); // the version has none of its own
    expect(await store.remove(fid, undefined, 'x')).toBe('absent');
    expect(await store.remove(fid, undefined, 'a')).toBe('removed');
    expect(await store.remove(fid, undefined, 'a')).toBe('absent');
    expect((await store.get(fid)).function).toEqual([{ ncaId: 'b' }]);
  });

  it('clears a scope, and forgets a deleted function whole', async () => {
    await store.set(fid, undefined, [{ ncaId: 'a' }]);
    await store.set(fid, v1, [{ ncaId: 'b' }]);
    await store.set(fid, v2, [{ ncaId: 'c' }]);
    await store.clear(fid, v1);
    expect(await store.get(fid)).toEqual({ function: [{ ncaId: 'a' }], versions: { [v2]: [{ ncaId: 'c' }] } });
    await store.clear(fid, undefined);
    expect(await store.get(fid)).toEqual({ function: [], versions: { [v2]: [{ ncaId: 'c' }] } });
    await store.forget(fid);
    expect(await db.redis.exists(keys.functionAuthorizations(fid))).toBe(0);
  });
});

describe('the shared-function index of each account', () => {
  const shared = (ncaId: string) => store.sharedWith(ncaId);

  it('follows set, add, remove, clear and forget: an account is indexed while it holds a party of the function', async () => {
    await store.set(fid, undefined, [{ ncaId: 'a' }, { ncaId: 'b' }]);
    await store.set(fid, v1, [{ ncaId: 'c' }, { ncaId: 'a' }]);
    expect([await shared('a'), await shared('b'), await shared('c')]).toEqual([[fid], [fid], [fid]]);
    // A replaced scope drops its accounts unless another scope still names them.
    await store.set(fid, undefined, [{ ncaId: 'd' }]);
    expect([await shared('a'), await shared('b'), await shared('d')]).toEqual([[fid], [], [fid]]);
    expect(await store.add(fid, v2, { ncaId: 'e' })).toBe('added');
    expect(await shared('e')).toEqual([fid]);
    expect(await store.remove(fid, v1, 'a')).toBe('removed');
    expect(await shared('a')).toEqual([]);
    await store.clear(fid, v1);
    expect(await shared('c')).toEqual([]);
    await store.forget(fid);
    expect([await shared('d'), await shared('e')]).toEqual([[], []]);
  });

  it('indexAccounts indexes hashes a release before the index wrote', async () => {
    // As the previous release wrote it: the hash only.
    await db.redis.hset(keys.functionAuthorizations(fid), 'f:a', '{"ncaId":"a"}', `v:${v1}:b`, '{"ncaId":"b"}');
    expect(await shared('a')).toEqual([]);
    await store.indexAccounts([fid]);
    expect([await shared('a'), await shared('b')]).toEqual([[fid], [fid]]);
  });
});
