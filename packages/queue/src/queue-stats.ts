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
 * own script (XLEN, XPENDING summary, ZCARD) and the oldest waiting job from the consumer group's
 * last-delivered id, so the cost per version is the same whatever the queue's length.
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

  /** The id of the first entry after the group's last delivered one: the oldest job no worker took. */
  async function oldestWaitingEntry(stream: string): Promise<string | undefined> {
    const groups = (await redis.xinfo('GROUPS', stream).catch((err: unknown) => {
      // No stream yet, or no worker ever read it: every entry (if any) is waiting.
      if (isNoGroup(err) || /no such key/i.test(String(err))) return [];
      throw err;
    })) as unknown[];
    const group = groups.map(fieldsOf).find((g) => g.name === WORKERS_GROUP);
    const after = group?.['last-delivered-id'];
    const start = after && after !== '0-0' ? `(${after}` : '-';
    const [first] = await redis.xrange(stream, start, '+', 'COUNT', 1);
    return first?.[0];
  }
}

/** XINFO's flat [field, value, ...] reply as a record of its string values. */
function fieldsOf(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(reply)) return out;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const value: unknown = reply[i + 1];
    if (typeof value === 'string' || typeof value === 'number') out[String(reply[i])] = String(value);
  }
  return out;
}
