import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from './keys.ts';

/** NVCF does not publish an asset lifetime; 24 h is the chosen default (nvcf-api.md §11, §15). */
export const DEFAULT_ASSET_TTL_SECONDS = 24 * 60 * 60;

export const AssetRecord = z.object({
  assetId: z.string(),
  contentType: z.string(),
  description: z.string(),
  createdAt: z.string(),
  ncaId: z.string(),
  /** The principal that created it (API key id or token subject): the only one who sees it. */
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

export interface AssetStore {
  readonly ttlSeconds: number;
  /** Records a new asset, living `ttlSeconds` from now. */
  create(input: NewAsset): Promise<AssetRecord>;
  /** The live record, or undefined (unknown, deleted or expired). */
  get(assetId: string): Promise<AssetRecord | undefined>;
  /** `get` for many ids in one round trip, in order. */
  getMany(assetIds: readonly string[]): Promise<(AssetRecord | undefined)[]>;
  /** The owner's live assets, oldest first. */
  list(ownerSubject: string): Promise<AssetRecord[]>;
  /** Notes stored bytes; keeps the expiry. Undefined when the record is gone (its bytes should go too). */
  markUploaded(assetId: string, size: number): Promise<AssetRecord | undefined>;
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
 * Asset records in Redis: one JSON string per asset with a TTL, an index per owner for listing, and a
 * global expiry index so the objects of expired assets can be reclaimed (Redis forgets the record by
 * itself; the bytes live elsewhere).
 */
export function createAssetStore(redis: Redis, keys: Keys, opts: { ttlSeconds?: number } = {}): AssetStore {
  const ttlSeconds = opts.ttlSeconds ?? DEFAULT_ASSET_TTL_SECONDS;
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1) throw new Error(`invalid asset TTL ${ttlSeconds}`);
  const parse = (json: string | null) => (json ? AssetRecord.parse(JSON.parse(json)) : undefined);
  const getMany = async (assetIds: readonly string[]) =>
    assetIds.length === 0 ? [] : (await redis.mget(assetIds.map((id) => keys.asset(id)))).map(parse);

  return {
    ttlSeconds,
    async create(input) {
      const now = Date.now();
      const record: AssetRecord = {
        assetId: input.assetId ?? randomUUID(),
        contentType: input.contentType,
        description: input.description,
        createdAt: new Date(now).toISOString(),
        ncaId: input.ncaId,
        ownerSubject: input.ownerSubject,
      };
      const expiresAt = now + ttlSeconds * 1000;
      const created = await redis.set(keys.asset(record.assetId), JSON.stringify(record), 'EX', ttlSeconds, 'NX');
      if (created !== 'OK') throw new Error(`asset ${record.assetId} already exists`);
      const owner = keys.ownerAssets(record.ownerSubject);
      await redis
        .multi()
        .zadd(owner, expiresAt, record.assetId)
        // The newest member expires last: the index lives as long as it.
        .pexpire(owner, ttlSeconds * 1000)
        .zadd(keys.assetExpiries, expiresAt, record.assetId)
        .exec();
      return record;
    },

    async get(assetId) {
      return parse(await redis.get(keys.asset(assetId)));
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

    async markUploaded(assetId, size) {
      const key = keys.asset(assetId);
      const current = parse(await redis.get(key));
      if (!current) return undefined;
      const updated: AssetRecord = { ...current, uploadedAt: new Date().toISOString(), size };
      // XX: a record deleted (or expired) meanwhile stays deleted; KEEPTTL: uploads do not extend it.
      const ok = await redis.set(key, JSON.stringify(updated), 'KEEPTTL', 'XX');
      return ok === 'OK' ? updated : undefined;
    },

    async delete(assetId) {
      const key = keys.asset(assetId);
      const record = parse(await redis.get(key));
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
