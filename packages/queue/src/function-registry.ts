import { DATATYPES, type DeploymentLimits } from '@nvcf/protocol';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from './keys.ts';

const TensorSpecSchema = z.object({ name: z.string(), datatype: z.enum(DATATYPES), shape: z.array(z.number().int()) });

/** One function version as stored in Redis: the NVCF FunctionDto fields we own plus its model. */
export const FunctionVersion = z.object({
  id: z.uuid(),
  versionId: z.uuid(),
  name: z.string(),
  ncaId: z.string(),
  createdAt: z.string(),
  description: z.string().default(''),
  functionType: z.enum(['DEFAULT', 'STREAMING', 'LLM']).default('DEFAULT'),
  apiBodyFormat: z.enum(['CUSTOM', 'PREDICT_V2']).default('PREDICT_V2'),
  inferenceUrl: z.string(),
  models: z.array(z.object({ name: z.string(), version: z.string(), uri: z.string() })).default([]),
  deployment: z
    .object({
      minInstances: z.number().int().min(0),
      maxInstances: z.number().int().min(1),
      maxRequestConcurrency: z.number().int().min(1),
    })
    .nullable(),
  model: z.object({
    name: z.string(),
    version: z.string(),
    platform: z.string(),
    inputs: z.array(TensorSpecSchema),
    outputs: z.array(TensorSpecSchema),
  }),
});
export type FunctionVersion = z.infer<typeof FunctionVersion>;
export type { DeploymentLimits };

export interface FunctionRegistry {
  /** Creates or updates a version; `createdAt` of an existing version is kept. */
  upsert(fv: FunctionVersion): Promise<void>;
  /** Every version of one function (empty when unknown). */
  versions(functionId: string): Promise<FunctionVersion[]>;
  list(): Promise<FunctionVersion[]>;
  /** Workers announce themselves for the versions they serve; entries expire after `ttlMs`. */
  heartbeat(workerId: string, versionIds: readonly string[], ttlMs: number): Promise<void>;
  removeWorker(workerId: string, versionIds: readonly string[]): Promise<void>;
  /** Ids of the live workers of each version, in the order asked. One round trip. */
  liveWorkers(versionIds: readonly string[]): Promise<string[][]>;
}

export function createFunctionRegistry(redis: Redis, keys: Keys): FunctionRegistry {
  const parseAll = (hash: Record<string, string>) =>
    Object.values(hash).map((json) => FunctionVersion.parse(JSON.parse(json)));

  const versions = async (functionId: string) => parseAll(await redis.hgetall(keys.functionVersions(functionId)));

  return {
    async upsert(fv) {
      const key = keys.functionVersions(fv.id);
      const existing = await redis.hget(key, fv.versionId);
      const createdAt = existing ? FunctionVersion.parse(JSON.parse(existing)).createdAt : fv.createdAt;
      await redis
        .multi()
        .sadd(keys.functionIds, fv.id)
        .hset(key, fv.versionId, JSON.stringify({ ...fv, createdAt }))
        .exec();
    },
    versions,
    async list() {
      const ids = (await redis.smembers(keys.functionIds)).sort();
      const pipe = redis.pipeline();
      for (const id of ids) pipe.hgetall(keys.functionVersions(id));
      const replies = (await pipe.exec()) ?? [];
      return replies.flatMap(([err, hash]) => (err ? [] : parseAll(hash as Record<string, string>)));
    },
    async heartbeat(workerId, versionIds, ttlMs) {
      const now = Date.now();
      const pipe = redis.pipeline();
      for (const vid of versionIds) {
        pipe.zadd(keys.versionWorkers(vid), now + ttlMs, workerId);
        pipe.zremrangebyscore(keys.versionWorkers(vid), '-inf', now);
      }
      await pipe.exec();
    },
    async removeWorker(workerId, versionIds) {
      const pipe = redis.pipeline();
      for (const vid of versionIds) pipe.zrem(keys.versionWorkers(vid), workerId);
      await pipe.exec();
    },
    async liveWorkers(versionIds) {
      if (versionIds.length === 0) return [];
      const now = Date.now();
      const pipe = redis.pipeline();
      for (const vid of versionIds) pipe.zrangebyscore(keys.versionWorkers(vid), now, '+inf');
      const replies = (await pipe.exec()) ?? [];
      return replies.map(([err, ids]) => (err ? [] : (ids as string[])));
    },
  };
}
