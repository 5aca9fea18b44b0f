import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '@nvcf/protocol';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from './keys.ts';

export const ApiKeyRecord = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  /** Absent: every function. */
  allowedFunctionIds: z.array(z.string()).optional(),
  createdAt: z.string(),
  revokedAt: z.string().optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

export interface NewApiKey {
  name: string;
  scopes: Scope[];
  allowedFunctionIds?: string[];
  /** Use this secret instead of a generated one (the operator's bootstrap key). */
  secret?: string;
}

export interface ApiKeyStore {
  /** Creates a key; the secret is returned once and only its SHA-256 is stored. */
  create(input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }>;
  /** The live record of a presented key, or undefined (unknown or revoked). */
  verify(key: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes by id; false when no such key. */
  revoke(id: string): Promise<boolean>;
}

/** API keys are high-entropy random strings, so a plain SHA-256 is the right hash (not a password KDF). */
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

/** Keys look like NGC's: `nvapi-` and 43 base64url characters (256 bits). */
export const generateApiKey = () => `nvapi-${randomBytes(32).toString('base64url')}`;

export function createApiKeyStore(redis: Redis, keys: Keys): ApiKeyStore {
  const read = async (id: string) => {
    const json = await redis.hget(keys.apiKeys, id);
    return json ? ApiKeyRecord.parse(JSON.parse(json)) : undefined;
  };
  return {
    async create(input) {
      const key = input.secret ?? generateApiKey();
      const hash = sha256(key);
      const existing = await redis.get(keys.apiKeyByHash(hash));
      const record: ApiKeyRecord = {
        id: existing ?? randomUUID(),
        name: input.name,
        scopes: [...new Set(input.scopes)],
        ...(input.allowedFunctionIds ? { allowedFunctionIds: input.allowedFunctionIds } : {}),
        createdAt: new Date().toISOString(),
      };
      await redis
        .multi()
        .hset(keys.apiKeys, record.id, JSON.stringify(record))
        .set(keys.apiKeyByHash(hash), record.id)
        .exec();
      return { key, record };
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
