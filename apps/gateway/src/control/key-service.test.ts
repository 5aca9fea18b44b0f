import { ApiKeyQuotaError, type ApiKeyRecord, type ApiKeyStore } from '@nvcf/control-store';
import { AppError, NVCF_SCOPES, SCOPES, type Scope } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.ts';
import { createKeyService } from './key-service.ts';

const HOME = 'home-account';

/**
 * The store's seam, in memory: the store itself (its Lua, its quota count) is tested against Redis in
 * control-store; here only the service's rules on top of it.
 */
function memoryKeyStore(records: ApiKeyRecord[] = []): Pick<ApiKeyStore, 'list' | 'create' | 'revoke'> {
  let clock = 0;
  return {
    list: async () => records.map((r) => ({ ...r })),
    async create(input, quota) {
      const account = input.ncaId ?? quota?.homeNcaId;
      const live = records.filter((r) => !r.revokedAt && (r.ncaId ?? quota?.homeNcaId) === account).length;
      if (quota && quota.maxPerAccount > 0 && live >= quota.maxPerAccount) {
        throw new ApiKeyQuotaError(account ?? '', quota.maxPerAccount);
      }
      const record: ApiKeyRecord = {
        id: `key-${records.length + 1}`,
        name: input.name,
        scopes: input.scopes,
        ...(input.allowedFunctionIds ? { allowedFunctionIds: input.allowedFunctionIds } : {}),
        ...(input.ncaId ? { ncaId: input.ncaId } : {}),
        createdAt: new Date(0).toISOString(),
      };
      records.push(record);
      return { key: `nvapi-${record.id}`, record };
    },
    async revoke(id) {
      const record = records.find((r) => r.id === id);
      if (record) record.revokedAt = new Date(++clock).toISOString();
      return record !== undefined;
    },
  };
}

const principal = (id: string, ncaId: string, scopes: readonly Scope[], functionIds?: string[]): Principal => ({
  kind: 'api-key',
  subject: id,
  ncaId,
  homeAccount: ncaId === HOME,
  scopes: new Set(scopes),
  ...(functionIds ? { allowedFunctionIds: new Set(functionIds) } : {}),
});

const record = (id: string, scopes: readonly Scope[], extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  name: id,
  scopes: [...scopes],
  createdAt: new Date(0).toISOString(),
  ...extra,
});

const FN = '6f1c2a4e-0000-4000-8000-000000000001';
const operator = principal('admin', HOME, SCOPES);
const restricted = principal('restricted', HOME, ['manage_keys', 'invoke_function'], [FN]);
const denied = (message: RegExp) =>
  expect.objectContaining({ code: 'PERMISSION_DENIED', message: expect.stringMatching(message) });

describe('the key service', () => {
  it('lists the keys of the caller’s account it could have created and itself, an operator every account’s', async () => {
    const store = memoryKeyStore([
      record('admin', SCOPES),
      record('restricted', ['manage_keys', 'invoke_function'], { allowedFunctionIds: [FN] }),
      record('narrow', ['invoke_function'], { allowedFunctionIds: [FN] }),
      record('theirs', ['invoke_function'], { ncaId: 'team-b' }),
    ]);
    const keys = createKeyService(store, { ncaId: HOME });
    expect((await keys.list(operator)).map((k) => [k.id, k.ncaId])).toEqual([
      ['admin', HOME],
      ['restricted', HOME],
      ['narrow', HOME],
      ['theirs', 'team-b'],
    ]);
    expect((await keys.list(restricted)).map((k) => k.id)).toEqual(['restricted', 'narrow']);
    expect((await keys.list(principal('b-admin', 'team-b', NVCF_SCOPES))).map((k) => k.id)).toEqual(['theirs']);
  });

  it('creates keys only within the caller’s scopes, functions and account (another account: an operator only)', async () => {
    const keys = createKeyService(memoryKeyStore(), { ncaId: HOME });
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
    const keys = createKeyService(memoryKeyStore([record('one', ['invoke_function'], { ncaId: 'team-b' })]), {
      ncaId: HOME,
      quotaCount: 1,
    });
    const refusal = keys.create(operator, { name: 'two', scopes: ['invoke_function'], ncaId: 'team-b' });
    await expect(refusal).rejects.toBeInstanceOf(AppError);
    await expect(refusal).rejects.toEqual(denied(/API key quota exceeded: account 'team-b' has 1 live keys/));
  });

  it('revokes what the caller may manage, once; another account’s key is unknown, a stronger one refused', async () => {
    const store = memoryKeyStore([
      record('admin', SCOPES),
      record('restricted', ['manage_keys', 'invoke_function'], { allowedFunctionIds: [FN] }),
      record('theirs', ['invoke_function'], { ncaId: 'team-b' }),
    ]);
    const keys = createKeyService(store, { ncaId: HOME });
    await expect(keys.revoke(restricted, 'theirs')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.revoke(restricted, 'missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(keys.revoke(restricted, 'admin')).rejects.toEqual(denied(/it holds more than the caller/));
    await keys.revoke(restricted, 'restricted');
    const first = (await store.list()).find((r) => r.id === 'restricted')?.revokedAt;
    expect(first).toBeDefined();
    await keys.revoke(operator, 'restricted');
    expect((await store.list()).find((r) => r.id === 'restricted')?.revokedAt).toBe(first);
  });
});
