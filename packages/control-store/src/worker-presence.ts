import type { Keys, RedisClient } from '@nvcf/queue';
import { z } from 'zod';
import type { FunctionRegistry } from './function-registry.ts';

/** What a worker says of the machine it runs on, with each heartbeat (NVCF's cluster groups are built from it). */
export const WorkerMachine = z.object({
  /** The worker pool (NVCF: cluster group) it belongs to. */
  pool: z.string().min(1),
  /** The GPU it runs on, `CPU` for none. */
  gpu: z.string().min(1),
  instanceType: z.string().min(1),
  /** When the worker process started (ms since the epoch): its instance's creation time. */
  startedAt: z.number().optional(),
});
export type WorkerMachine = z.infer<typeof WorkerMachine>;

const LiveWorkerRecord = WorkerMachine.extend({
  workerId: z.string(),
  expiresAt: z.number(),
  /** Its latest heartbeat (absent in records of workers older than this field). */
  beatAt: z.number().optional(),
});
export type LiveWorker = z.infer<typeof LiveWorkerRecord>;

export type WorkerPresence = Pick<
  FunctionRegistry,
  'heartbeat' | 'removeWorker' | 'workerGone' | 'liveMachines' | 'liveWorkers'
>;

/** The registry's view of live workers: their heartbeats, per version served and per machine. */
export function createWorkerPresence(redis: RedisClient, keys: Keys): WorkerPresence {
  return {
    async heartbeat(workerId, versionIds, ttlMs, machine) {
      const now = Date.now();
      if (machine) {
        const record: LiveWorker = { ...machine, workerId, expiresAt: now + ttlMs, beatAt: now };
        await redis.hset(keys.workers, workerId, JSON.stringify(record));
      }
      // Each version's set lives in its version's slot: sent in one tick, they still leave in one write per node.
      await Promise.all(
        versionIds.flatMap((vid) => [
          redis.zadd(keys.versionWorkers(vid), now + ttlMs, workerId),
          redis.zremrangebyscore(keys.versionWorkers(vid), '-inf', now),
        ]),
      );
    },
    async removeWorker(workerId, versionIds) {
      await Promise.all(versionIds.map((vid) => redis.zrem(keys.versionWorkers(vid), workerId)));
    },
    async workerGone(workerId) {
      await redis.hdel(keys.workers, workerId);
    },
    async liveMachines() {
      const now = Date.now();
      const all = Object.values(await redis.hgetall(keys.workers)).flatMap((json) => {
        const parsed = LiveWorkerRecord.safeParse(JSON.parse(json));
        return parsed.success ? [parsed.data] : [];
      });
      // A killed worker never says goodbye: its entry is dropped by the first reader after it expired.
      const expired = all.filter((w) => w.expiresAt <= now).map((w) => w.workerId);
      if (expired.length > 0) await redis.hdel(keys.workers, ...expired);
      return all.filter((w) => w.expiresAt > now);
    },
    async liveWorkers(versionIds) {
      if (versionIds.length === 0) return [];
      const now = Date.now();
      return Promise.all(versionIds.map((vid) => redis.zrangebyscore(keys.versionWorkers(vid), now, '+inf')));
    },
  };
}
