import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isScope, type Scope } from '@nvcf/protocol';
import type { Keys, RedisClient } from '@nvcf/queue';
import { z } from 'zod';

export const ApiKeyRecord = z.object({
  id: z.string(),
  name: z.string(),
  // A scope this release does not know (written by a newer gateway during a rolling upgrade) grants nothing here.
  scopes: z.array(z.string()).transform((names) => names.filter(isScope)),
  /** Absent: every function. */
  allowedFunctionIds: z.array(z.string()).optional(),
  /**
   * The account (NCA id) the key belongs to. Absent on keys stored before keys had accounts, and on the bootstrap
   * key: those belong to the gateway's own account (NVCF_NCA_ID).
   */
  ncaId: z.string().optional(),
  createdAt: z.string(),
  revokedAt: z.string().optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

export interface NewApiKey {
  name: string;
  scopes: Scope[];
  allowedFunctionIds?: string[];
  /** Its account; absent: the gateway's own (NVCF_NCA_ID). */
  ncaId?: string;
  /** Use this secret instead of a generated one; refused when it was ever registered (even if revoked). */
  secret?: string;
}

/** Unrestricted (no function list) and with at least one scope: the record round-trips through Lua's cjson. */
export interface BootstrapApiKey {
  name: string;
  scopes: Scope[];
  /** The operator's own secret (NVCF_BOOTSTRAP_ADMIN_KEY). */
  secret: string;
}

/** How many live keys one account may hold. */
export interface ApiKeyQuota {
  /** The most live (unrevoked) keys of the new key's account; 0: unlimited. */
  maxPerAccount: number;
  /** The gateway's own account (NVCF_NCA_ID): a record without `ncaId` (the bootstrap key's) counts as its. */
  homeNcaId: string;
}

/** The new key's account holds `limit` live keys already. */
export class ApiKeyQuotaError extends Error {
  readonly ncaId: string;
  readonly limit: number;
  constructor(ncaId: string, limit: number) {
    super(`account '${ncaId}' holds ${limit} live API keys already`);
    this.name = 'ApiKeyQuotaError';
    this.ncaId = ncaId;
    this.limit = limit;
  }
}

export interface ApiKeyStore {
  /**
   * Creates a key; the secret is returned once and only its SHA-256 is stored. Never overwrites a key. With `quota`,
   * counted and written in one script (concurrent creates cannot pass it): ApiKeyQuotaError past it.
   */
  create(input: NewApiKey, quota?: ApiKeyQuota): Promise<{ key: string; record: ApiKeyRecord }>;
  /**
   * Registers an operator-chosen key the first time its secret is seen; afterwards keeps its record (a
   * live one gets `scopes`, so a release's new scopes reach it) and never brings a revoked one back.
   * Atomic: of gateways starting together, exactly one creates it. No record: the key was registered
   * once and its record has since been deleted (by hand); it stays unusable.
   */
  bootstrap(input: BootstrapApiKey): Promise<{ created: boolean; record?: ApiKeyRecord }>;
  /** The live record of a presented key, or undefined (unknown or revoked). */
  verify(key: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes by id; false when no such key. */
  revoke(id: string): Promise<boolean>;
}

/** API keys are high-entropy random strings, so a plain SHA-256 is the right hash (not a password KDF). */
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

const newRecord = (input: NewApiKey): ApiKeyRecord => ({
  id: randomUUID(),
  name: input.name,
  scopes: [...new Set(input.scopes)],
  ...(input.allowedFunctionIds ? { allowedFunctionIds: input.allowedFunctionIds } : {}),
  ...(input.ncaId !== undefined ? { ncaId: input.ncaId } : {}),
  createdAt: new Date().toISOString(),
});

/** Keys look like NGC's: `nvapi-` and 43 base64url characters (256 bits). */
export const generateApiKey = () => `nvapi-${randomBytes(32).toString('base64url')}`;

/**
 * Registers a key unless its hash ever was (a revoked key keeps its hash entry, so it is never re-created), and
 * unless its account holds its quota of live keys already. Key creation is an administrator's act, rare: counting
 * reads every record (one pass, no index to keep in step with revocations).
 * KEYS[1] apiKeyByHash(hash), KEYS[2] apiKeys; ARGV[1] the id, ARGV[2] the record's JSON, ARGV[3] the key's account,
 * ARGV[4] the gateway's own account (a record without `ncaId` is its), ARGV[5] the most live keys of the account
 * (0: unlimited). Returns 1 created, 0 the secret was registered before, 2 the account is at its quota.
 */
const CREATE = `
local most = tonumber(ARGV[5])
if most > 0 then
  local live = 0
  for _, json in ipairs(redis.call('HVALS', KEYS[2])) do
    local record = cjson.decode(json)
    if not record.revokedAt and (record.ncaId or ARGV[4]) == ARGV[3] then live = live + 1 end
  end
  if live >= most then return 2 end
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`;

/**
 * Bootstraps an operator key. The hash → id entry is never deleted (revoking marks the record), so it is
 * the marker that the key was created once.
 * KEYS[1] apiKeyByHash(hash), KEYS[2] apiKeys (id → record JSON)
 * ARGV[1] the new id, ARGV[2] the new record's JSON, ARGV[3] the scopes (JSON array) for a live record
 * Returns {1, json} when created now, {0, json} for the record already there, {0} when that record is gone.
 */
const BOOTSTRAP = `
local id = redis.call('GET', KEYS[1])
if not id then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return {1, ARGV[2]}
end
local json = redis.call('HGET', KEYS[2], id)
if not json then return {0} end
local record = cjson.decode(json)
if record.revokedAt then return {0, json} end
record.scopes = cjson.decode(ARGV[3])
json = cjson.encode(record)
redis.call('HSET', KEYS[2], id, json)
return {0, json}
`;

export function createApiKeyStore(redis: RedisClient, keys: Keys): ApiKeyStore {
  const read = async (id: string) => {
    const json = await redis.hget(keys.apiKeys, id);
    return json ? ApiKeyRecord.parse(JSON.parse(json)) : undefined;
  };
  return {
    async create(input, quota) {
      const key = input.secret ?? generateApiKey();
      const record = newRecord(input);
      const home = quota?.homeNcaId ?? '';
      const account = input.ncaId ?? home;
      const created = await redis.eval(
        CREATE,
        2,
        keys.apiKeyByHash(sha256(key)),
        keys.apiKeys,
        record.id,
        JSON.stringify(record),
        account,
        home,
        quota?.maxPerAccount ?? 0,
      );
      if (created === 2) throw new ApiKeyQuotaError(account, quota?.maxPerAccount ?? 0);
      if (created !== 1) throw new Error('an API key with this secret is already registered (or was, and is revoked)');
      return { key, record };
    },
    async bootstrap(input) {
      // cjson writes an empty array back as {}, which would no longer parse.
      if (input.scopes.length === 0) throw new Error('a bootstrap key needs at least one scope');
      const record = newRecord({ name: input.name, scopes: input.scopes });
      const [created, json] = (await redis.eval(
        BOOTSTRAP,
        2,
        keys.apiKeyByHash(sha256(input.secret)),
        keys.apiKeys,
        record.id,
        JSON.stringify(record),
        JSON.stringify(record.scopes),
      )) as [number, string?];
      if (json === undefined) return { created: false };
      return { created: created === 1, record: ApiKeyRecord.parse(JSON.parse(json)) };
    },
    async verify(key) {
      const id = await redis.get(keys.apiKeyByHash(sha256(key)));
      if (!id) return undefined;
      const record = await read(id);
      return record && !record.revokedAt ? record : undefined;
    },
    async list() {
      const all = await redis.hvals(keys.apiKeys);
      return all
        .map((json) => ApiKeyRecord.parse(JSON.parse(json)))
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    async revoke(id) {
      const record = await read(id);
      if (!record) return false;
      await redis.hset(keys.apiKeys, id, JSON.stringify({ ...record, revokedAt: new Date().toISOString() }));
      return true;
    },
  };
}
