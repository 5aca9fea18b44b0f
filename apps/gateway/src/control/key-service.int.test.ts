import { randomUUID } from 'node:crypto';
import { type ApiKeyStore, createApiKeyStore, type NewApiKey } from '@nvcf/control-store';
import { AppError, NVCF_SCOPES, SCOPES, type Scope } from '@nvcf/protocol';
import { createKeys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.ts';
import { createKeyService } from './key-service.ts';

const HOME = 'home-account';

const db = usePrivateRedis();
/** A real key store on this file's Redis, under a prefix of its own per test. */
const newStore = () => createApiKeyStore(db.redis, createKeys(`keys-${randomUUID().slice(0, 8)}`));

/** Keys stored as an operator would have made them; their ids by name. */
async function seed(store: ApiKeyStore, records: NewApiKey[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const input of records) ids.set(input.name, (await store.create(input)).record.id);
  return ids;
}

const principal = (id: string, ncaId: string, scopes: readonly Scope[], functionIds?: string[]): Principal => ({
  kind: 'api-key',
  subject: id,
  ncaId,
  homeAccount: ncaId === HOME,
  scopes: new Set(scopes),
  ...(functionIds ? { allowedFunctionIds: new Set(functionIds) } : {}),
});

const record = (name: string, scopes: readonly Scope[], extra: Partial<NewApiKey> = {}): NewApiKey => ({
  name,
  scopes: [...scopes],
  ...extra,
});

const FN = '6f1c2a4e-0000-4000-8000-000000000001';
const operator = principal('operator', HOME, SCOPES);
const restrictedOf = (ids: Map<string, string>) =>
  principal(ids.get('restricted') ?? 'restricted', HOME, ['manage_keys', 'invoke_function'], [FN]);
const denied = (message: RegExp) =>
  expect.objectContaining({ code: 'PERMISSION_DENIED', message: expect.stringMatching(message) });

describe('the key service', () => {
  it('lists the keys of the caller’s account it could have created and itself, an operator every account’s', async () => {
    const store = newStore();
    const ids = await seed(store, [
      record('admin', SCOPES),
      record('restricted', ['manage_keys', 'invoke_function'], { allowedFunctionIds: [FN] }),
      record('narrow', ['invoke_function'], { allowedFunctionIds: [FN] }),
      record('theirs', ['invoke_function'], { ncaId: 'team-b' }),
    ]);
    const keys = createKeyService(store, { ncaId: HOME });
    // Created within the same millisecond, keys have no order of their own: compared as sets.
    const names = async (caller: Principal) => (await keys.list(caller)).map((k) => `${k.name}@${k.ncaId}`).sort();
    expect(await names(operator)).toEqual([
      'admin@home-account',
      'narrow@home-account',
      'restricted@home-account',
      'theirs@team-b',
    ]);
    expect(await names(restrictedOf(ids))).toEqual(['narrow@home-account', 'restricted@home-account']);
    expect(await names(principal('b-admin', 'team-b', NVCF_SCOPES))).toEqual(['theirs@team-b']);
  });

  it('creates keys only within the caller’s scopes, functions and account (another account: an operator only)', async () => {
    const keys = createKeyService(newStore(), { ncaId: HOME });
    const restricted = restrictedOf(new Map());
    await expect(keys.create(restricted, { name: 'k', scopes: ['list_functions'], functionIds: [FN] })).rejects.toEqual(
      denied(/scope\(s\) the caller does not hold: 'list_functions'/),
    );
    await expect(keys.create(restricted, { name: 'k', scopes: ['invoke_function'] })).rejects.toEqual(
      denied(/every function, while the caller is restricted/),
    );
    await expect(
      keys.create(principal('b-admin', 'team-b', NVCF_SCOPES), { name: 'k', scopes: ['invoke_function'], ncaId: 'c' }),
    ).rejects.toEqual(denied(/cannot create a key for account 'c': only an operator/));
    const made = await keys.create(restricted, {
      name: 'k',
      scopes: ['invoke_function'],
      functionIds: [FN.toUpperCase(), FN],
    });
    expect(made.key).toMatchObject({ ncaId: HOME, functionIds: [FN] });
    expect(made.secret).toMatch(/^nvapi-/);
    const other = await keys.create(operator, { name: 'b', scopes: ['invoke_function'], ncaId: 'team-b' });
    expect(other.key.ncaId).toBe('team-b');
  });

  it('answers an account at its quota with the quota’s 403', async () => {
    const store = newStore();
    await seed(store, [record('one', ['invoke_function'], { ncaId: 'team-b' })]);
    const keys = createKeyService(store, { ncaId: HOME, quotaCount: 1 });
    const refusal = keys.create(operator, { name: 'two', scopes: ['invoke_function'], ncaId: 'team-b' });
    await expect(refusal).rejects.toBeInstanceOf(AppError);
    await expect(refusal).rejects.toEqual(denied(/API key quota exceeded: account 'team-b' has 1 live keys/));
  });

  it('revokes what the caller may manage, once; another account’s key is unknown, a stronger one refused', async () => {
    const store = newStore();
    const ids = await seed(store, [
      record('admin', SCOPES),
      record('restricted', ['manage_keys', 'invoke_function'], { allowedFunctionIds: [FN] }),
      record('theirs', ['invoke_function'], { ncaId: 'team-b' }),
    ]);
    const id = (name: string) => ids.get(name) ?? name;
    const keys = createKeyService(store, { ncaId: HOME });
    const restricted = restrictedOf(ids);
    await expect(keys.revoke(restricted, id('theirs'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.revoke(restricted, 'missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.revoke(restricted, id('admin'))).rejects.toEqual(denied(/it holds more than the caller/));
    await keys.revoke(restricted, id('restricted'));
    const first = (await store.list()).find((r) => r.id === id('restricted'))?.revokedAt;
    expect(first).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await keys.revoke(operator, id('restricted'));
    expect((await store.list()).find((r) => r.id === id('restricted'))?.revokedAt).toBe(first);
  });
});
