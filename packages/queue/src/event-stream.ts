import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

/** One server-sent event of a request, as the function produced it. */
export interface StreamEvent {
  /** Redis Stream id: readers resume after the last one they saw. */
  id: string;
  data: string;
  /** The function finished: nothing follows. An empty last event is only that mark (it is not sent). */
  last: boolean;
  /** The function failed after its stream had started: `data` is its problem+json (`event: error`). */
  error: boolean;
}

/** What a producer appends: one event's data, whether it is the last, whether it reports a failure. */
export interface NewStreamEvent {
  data: string;
  last?: boolean;
  error?: boolean;
}

export interface EventStream {
  /** Appends events (in order) and wakes whoever reads this request's stream, on any gateway. */
  append(requestId: string, events: NewStreamEvent[]): Promise<void>;
  /** The reader went away: producers of this request's events should stop. */
  cancel(requestId: string): Promise<void>;
  isCancelled(requestId: string): Promise<boolean>;
  /**
   * A stream takes charge of the request (the one that started it, or a client resuming it): returns its
   * attachment, which `cancelUnlessResumed` compares against once that stream's client left.
   */
  attach(requestId: string): Promise<number>;
  /** Cancels the request unless another stream attached after `attachment`; true when it did. */
  cancelUnlessResumed(requestId: string, attachment: number): Promise<boolean>;
  /** Events after `afterId` ('0' for all), at most `count`. */
  read(requestId: string, afterId: string, count?: number): Promise<StreamEvent[]>;
}

/**
 * A request's events live in a Redis Stream with a TTL, so a gateway that starts reading late, or
 * another gateway than the accepting one, sees every event. Appends are announced on one channel that
 * each gateway subscribes once (the completion waiter's subscription), never per request.
 */
export function createEventStream(redis: RedisClient, keys: Keys, opts: { ttlSeconds: number }): EventStream {
  return {
    async append(requestId, events) {
      const key = keys.events(requestId);
      const tx = redis.multi();
      for (const e of events) {
        if (e.error) tx.xadd(key, '*', 'data', e.data, 'last', e.last ? '1' : '0', 'error', '1');
        else tx.xadd(key, '*', 'data', e.data, 'last', e.last ? '1' : '0');
      }
      tx.expire(key, opts.ttlSeconds);
      tx.publish(keys.eventsAppended, requestId);
      await tx.exec();
    },
    async cancel(requestId) {
      await redis.set(keys.cancelled(requestId), '1', 'EX', opts.ttlSeconds);
    },
    async isCancelled(requestId) {
      return (await redis.exists(keys.cancelled(requestId))) === 1;
    },
    async attach(requestId) {
      const key = keys.streamAttach(requestId);
      const [[, n]] = (await redis.multi().incr(key).expire(key, opts.ttlSeconds).exec()) as [[null, number]];
      return n;
    },
    async cancelUnlessResumed(requestId, attachment) {
      // One script: a resume that attaches between the check and the cancel cannot be overruled.
      const done = await redis.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[2], '1', 'EX', ARGV[2]) return 1 end return 0",
        2,
        keys.streamAttach(requestId),
        keys.cancelled(requestId),
        String(attachment),
        String(opts.ttlSeconds),
      );
      return done === 1;
    },
    async read(requestId, afterId, count = 256) {
      const start = afterId === '0' ? '-' : `(${afterId}`;
      const entries = await redis.xrange(keys.events(requestId), start, '+', 'COUNT', count);
      return entries.map(([id, fields]) => {
        const f: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
        return { id, data: f.data ?? '', last: f.last === '1', error: f.error === '1' };
      });
    },
  };
}
