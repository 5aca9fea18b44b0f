import { randomUUID } from 'node:crypto';
import type { Keys, RedisClient } from '@nvcf/queue';
import { z } from 'zod';

/** NVCF does not publish an asset lifetime; 24 h is the chosen default (NVCF behaviour: assets). */
export const DEFAULT_ASSET_TTL_SECONDS = 24 * 60 * 60;

export const AssetRecord = z.object({
  assetId: z.string(),
  contentType: z.string(),
  description: z.string(),
  createdAt: z.string(),
  ncaId: z.string(),
  /**
   * The principal that created it, the only one who sees it: the gateway's principal key (kind, account and
   * subject). Records of earlier releases hold an API key's bare id or a token's bare subject.
   */
  ownerSubject: z.string(),
  /** Set once bytes were stored (the latest upload when there were several). */
  uploadedAt: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
});
export type AssetRecord = z.infer<typeof AssetRecord>;

export interface NewAsset {
  contentType: string;
  description: string;
  ncaId: string;
  ownerSubject: string;
  /** A chosen id (tests); a random UUID otherwise. */
  assetId?: string;
}

/** Per-owner limits on live assets; 0 or absent: unlimited. */
export interface AssetQuota {
  /** Total stored bytes of the owner's live assets. */
  bytes?: number;
  /** Number of the owner's live assets, uploaded or not. */
  count?: number;
}

/** What one owner's live (unexpired, undeleted) assets take. */
export interface AssetUsage {
  bytes: number;
  count: number;
}

/** An operation would take the owner past a quota; nothing was changed. */
export class AssetQuotaError extends Error {
  readonly kind: 'bytes' | 'count';
  /** What the owner's other live assets already take (bytes or count). */
  readonly used: number;
  readonly limit: number;
  constructor(kind: 'bytes' | 'count', used: number, limit: number) {
    super(`asset ${kind} quota exceeded: ${used} used of ${limit}`);
    this.name = 'AssetQuotaError';
    this.kind = kind;
    this.used = used;
    this.limit = limit;
  }
}

export interface AssetStore {
  readonly ttlSeconds: number;
  /**
   * Records a new asset, living `ttlSeconds` from now.
   * @throws AssetQuotaError (count) when the owner already has `quota.count` live assets
   */
  create(input: NewAsset, quota?: AssetQuota): Promise<AssetRecord>;
  /** The live record, or undefined (unknown, deleted or expired). */
  get(assetId: string): Promise<AssetRecord | undefined>;
  /** `get` for many ids in one round trip, in order. */
  getMany(assetIds: readonly string[]): Promise<(AssetRecord | undefined)[]>;
  /** The owner's live assets, oldest first. */
  list(ownerSubject: string): Promise<AssetRecord[]>;
  /** Bytes and count of the owner's live assets, leaving out `excluding` (an asset being re-uploaded). */
  usage(ownerSubject: string, excluding?: string): Promise<AssetUsage>;
  /**
   * Notes stored bytes; keeps the expiry. Undefined when the record is gone (its bytes should go too).
   * With `quota.bytes`, the check against the owner's other live assets and the update are one atomic
   * step, so concurrent uploads cannot together pass the quota.
   * @throws AssetQuotaError (bytes): the record is then marked as holding no bytes (they should go)
   */
  markUploaded(assetId: string, size: number, quota?: AssetQuota): Promise<AssetRecord | undefined>;
  /** Removes the record; the removed record, or undefined when there was none. */
  delete(assetId: string): Promise<AssetRecord | undefined>;
  /** Ids of assets past their expiry whose objects may still exist, oldest first (at most `limit`). */
  expired(limit: number, now?: number): Promise<string[]>;
  /** Forgets expired ids once their objects were removed. */
  forgetExpired(assetIds: readonly string[]): Promise<void>;
}

/** Where an asset's bytes live in the object store (the gateway writes them, the worker reads them). */
export const assetObjectKey = (assetId: string) => `assets/${assetId}`;

/**
 * Creates an asset record unless its owner is at the count quota.
 * KEYS[1] the record, KEYS[2] the owner's index, KEYS[3] the global expiry index.
 * ARGV[1] record JSON, ARGV[2] TTL (ms), ARGV[3] now (ms), ARGV[4] expiry (ms), ARGV[5] asset id,
 * ARGV[6] most live assets (0: unlimited).
 * Returns 1 (created), 0 (the id exists), or -n (refused: the owner has n live assets).
 */
const CREATE_ASSET = `
local max = tonumber(ARGV[6])
if max > 0 then
  local live = redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[3], '+inf')
  if live >= max then return -live end
end
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 0 end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
-- The newest member expires last: the index lives as long as it.
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
return 1
`;

/**
 * Notes an asset's stored size unless that takes its owner past the byte quota. The owner's usage is
 * summed from the records of the live entries of their index: nothing to keep in step, and expiry or
 * deletion frees quota by itself. The count quota bounds the scan. The other records' keys are built
 * here from ARGV[1]: on a cluster that is allowed because every asset key carries the `{assets}` hash tag (keys.ts).
 * KEYS[1] the record, KEYS[2] the owner's index.
 * ARGV[1] record key prefix, ARGV[2] asset id, ARGV[3] now (ms), ARGV[4] size, ARGV[5] byte quota
 * (0: unlimited), ARGV[6] record JSON with the size, ARGV[7] record JSON without any, ARGV[8] owner.
 * Returns {1, 0} (noted), {0, 0} (no record), {-1, used} (refused, the record now holds no bytes).
 */
const MARK_UPLOADED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local quota = tonumber(ARGV[5])
if quota > 0 then
  local used = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[3], '+inf')) do
    if id ~= ARGV[2] then
      local raw = redis.call('GET', ARGV[1] .. id)
      if raw then
        local ok, rec = pcall(cjson.decode, raw)
        if ok and rec.ownerSubject == ARGV[8] and rec.uploadedAt and type(rec.size) == 'number' then
          used = used + rec.size
        end
      end
    end
  end
  if used + tonumber(ARGV[4]) > quota then
    redis.call('SET', KEYS[1], ARGV[7], 'KEEPTTL', 'XX')
    return {-1, used}
  end
end
redis.call('SET', KEYS[1], ARGV[6], 'KEEPTTL', 'XX')
return {1, 0}
`;

/**
 * Asset records in Redis: one JSON string per asset with a TTL, an index per owner for listing (and
 * quota accounting), and a global expiry index so the objects of expired assets can be reclaimed (Redis
 * forgets the record by itself; the bytes live elsewhere).
 */
export function createAssetStore(redis: RedisClient, keys: Keys, opts: { ttlSeconds?: number } = {}): AssetStore {
  const ttlSeconds = opts.ttlSeconds ?? DEFAULT_ASSET_TTL_SECONDS;
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1) throw new Error(`invalid asset TTL ${ttlSeconds}`);
  const getMany = async (assetIds: readonly string[]) =>
    assetIds.length === 0 ? [] : (await redis.mget(assetIds.map((id) => keys.asset(id)))).map(parseAsset);

  return {
    ttlSeconds,
    create: (input, quota = {}) => createAsset(redis, keys, ttlSeconds, input, quota),

    async get(assetId) {
      return parseAsset(await redis.get(keys.asset(assetId)));
    },

    getMany,

    async list(ownerSubject) {
      const owner = keys.ownerAssets(ownerSubject);
      await redis.zremrangebyscore(owner, '-inf', Date.now());
      const ids = await redis.zrange(owner, 0, -1);
      const records = await getMany(ids);
      return records
        .filter((r): r is AssetRecord => r !== undefined && r.ownerSubject === ownerSubject)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async usage(ownerSubject, excluding) {
      const ids = await redis.zrangebyscore(keys.ownerAssets(ownerSubject), `(${Date.now()}`, '+inf');
      return usageOf(await getMany(ids.filter((id) => id !== excluding)), ownerSubject);
    },

    markUploaded: (assetId, size, quota = {}) => markUploaded(redis, keys, assetId, size, quota),

    async delete(assetId) {
      const key = keys.asset(assetId);
      const record = parseAsset(await redis.get(key));
      if (!record) return undefined;
      const [deleted] = (await redis
        .multi()
        .del(key)
        .zrem(keys.ownerAssets(record.ownerSubject), assetId)
        .zrem(keys.assetExpiries, assetId)
        .exec()) ?? [[null, 0]];
      return deleted?.[1] === 1 ? record : undefined;
    },

    async expired(limit, now = Date.now()) {
      return redis.zrangebyscore(keys.assetExpiries, '-inf', now, 'LIMIT', 0, limit);
    },

    async forgetExpired(assetIds) {
      if (assetIds.length > 0) await redis.zrem(keys.assetExpiries, ...assetIds);
    },
  };
}

function usageOf(records: readonly (AssetRecord | undefined)[], ownerSubject: string): AssetUsage {
  let bytes = 0;
  let count = 0;
  for (const r of records) {
    if (!r || r.ownerSubject !== ownerSubject) continue;
    count += 1;
    if (r.uploadedAt !== undefined) bytes += r.size ?? 0;
  }
  return { bytes, count };
}

const parseAsset = (json: string | null) => (json ? AssetRecord.parse(JSON.parse(json)) : undefined);

async function createAsset(
  redis: RedisClient,
  keys: Keys,
  ttlSeconds: number,
  input: NewAsset,
  quota: AssetQuota,
): Promise<AssetRecord> {
  const now = Date.now();
  const record: AssetRecord = {
    assetId: input.assetId ?? randomUUID(),
    contentType: input.contentType,
    description: input.description,
    createdAt: new Date(now).toISOString(),
    ncaId: input.ncaId,
    ownerSubject: input.ownerSubject,
  };
  const ttlMs = ttlSeconds * 1000;
  const maxCount = quota.count ?? 0;
  const created = Number(
    await redis.eval(
      CREATE_ASSET,
      3,
      keys.asset(record.assetId),
      keys.ownerAssets(record.ownerSubject),
      keys.assetExpiries,
      JSON.stringify(record),
      ttlMs,
      now,
      now + ttlMs,
      record.assetId,
      maxCount,
    ),
  );
  if (created < 0) throw new AssetQuotaError('count', -created, maxCount);
  if (created === 0) throw new Error(`asset ${record.assetId} already exists`);
  return record;
}

async function markUploaded(
  redis: RedisClient,
  keys: Keys,
  assetId: string,
  size: number,
  quota: AssetQuota,
): Promise<AssetRecord | undefined> {
  const key = keys.asset(assetId);
  const current = parseAsset(await redis.get(key));
  if (!current) return undefined;
  const { uploadedAt: _at, size: _size, ...empty } = current;
  const updated: AssetRecord = { ...empty, uploadedAt: new Date().toISOString(), size };
  const maxBytes = quota.bytes ?? 0;
  // XX: a record deleted (or expired) meanwhile stays deleted; KEEPTTL: uploads do not extend it.
  const reply = await redis.eval(
    MARK_UPLOADED,
    2,
    key,
    keys.ownerAssets(current.ownerSubject),
    keys.asset(''),
    assetId,
    Date.now(),
    size,
    maxBytes,
    JSON.stringify(updated),
    JSON.stringify(empty),
    current.ownerSubject,
  );
  const [outcome, used] = Array.isArray(reply) ? reply.map(Number) : [];
  if (outcome === -1) throw new AssetQuotaError('bytes', used ?? 0, maxBytes);
  return outcome === 1 ? updated : undefined;
}
