import { type Keys, WORKERS_GROUP } from './keys.ts';
import { withRequestScripts } from './lua-scripts.ts';
import { isNoGroup, type RedisClient } from './redis-connection.ts';

/** One function version's shared queue, as an autoscaler reads it. */
export interface QueueCounts {
  /** Jobs no worker has taken yet. */
  waiting: number;
  /** Jobs a worker has taken and not finished. */
  active: number;
  /** Failed attempts waiting out their pause before they queue again. */
  delayed: number;
  /** Age of the oldest waiting job (0 when none waits), from its stream entry id (Redis' clock). */
  oldestWaitingSeconds: number;
}

export interface QueueStats {
  /** A version's shared queue (sequence routing's per-worker queues are not included): two round trips. */
  counts(versionId: string): Promise<QueueCounts>;
}

/**
 * Read-only counts of the invocation queues, for metrics. Never scans: the counts come from the queue's
 * own script (XLEN, XPENDING summary, ZCARD) and the oldest waiting job from one XPENDING summary and one
 * XRANGE … COUNT 1, so the cost per version is the same whatever the queue's length.
 */
export function createQueueStats(redis: RedisClient, keys: Keys): QueueStats {
  const r = withRequestScripts(redis);
  return {
    async counts(versionId) {
      const q = keys.queue(versionId);
      const [[inStream, running, delayed], oldest] = await Promise.all([
        r.nvcfQueueCounts(q.stream, q.delayed, WORKERS_GROUP),
        oldestWaitingEntry(q.stream),
      ]);
      const waiting = Math.max(0, inStream - running);
      const bornAt = oldest ? Number(oldest.slice(0, oldest.indexOf('-'))) : undefined;
      const oldestWaitingSeconds = waiting > 0 && bornAt ? Math.max(0, (Date.now() - bornAt) / 1000) : 0;
      return { waiting, active: running, delayed, oldestWaitingSeconds };
    },
  };

  /**
   * The id of the oldest job no worker has taken. A job leaves its stream as it is acknowledged (its answer
   * stored, or its retry delayed), so the stream holds the taken jobs (pending in the group) and after them the
   * waiting ones: the oldest waiting is the first entry after the newest pending one (XINFO GROUPS would say
   * the same, but a cluster client cannot route it by key).
   */
  async function oldestWaitingEntry(stream: string): Promise<string | undefined> {
    const summary = (await redis.xpending(stream, WORKERS_GROUP).catch((err: unknown) => {
      // No worker ever read this queue (or it does not exist): every entry, if any, is waiting.
      if (isNoGroup(err)) return [0];
      throw err;
    })) as unknown[];
    const newestPending = Number(summary[0]) > 0 && typeof summary[2] === 'string' ? summary[2] : undefined;
    const [first] = await redis.xrange(stream, newestPending ? `(${newestPending}` : '-', '+', 'COUNT', 1);
    return first?.[0];
  }
}
