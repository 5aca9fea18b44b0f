import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createInvocationProducer } from './invocation-producer.ts';
import { createKeys, newRequestId, WORKERS_GROUP } from './keys.ts';
import { usePrivateRedis } from './private-redis.ts';
import { createQueueStats } from './queue-stats.ts';

const db = usePrivateRedis();

describe('queue stats (what the gateway metrics read)', () => {
  it('counts waiting, active and delayed jobs and the oldest waiting job’s age, without a queue or a group first', async () => {
    const keys = createKeys(`s${randomUUID().slice(0, 8)}`);
    const stats = createQueueStats(db.redis, keys);
    const producer = createInvocationProducer(db.redis, keys, { attempts: 3, ttlSeconds: 60 });
    const versionId = randomUUID();
    const none = { waiting: 0, active: 0, delayed: 0, oldestWaitingSeconds: 0 };
    // No stream yet: nothing was ever queued for this version.
    expect(await stats.counts(versionId)).toEqual(none);

    const enqueue = () =>
      producer.enqueue({
        requestId: newRequestId(versionId),
        functionId: randomUUID(),
        versionId,
        input: { kind: 'json', contentType: 'application/json', value: {} },
        headers: {},
      });
    const before = Date.now();
    await enqueue();
    await enqueue();
    // No worker ever read the queue (no consumer group): both wait; the oldest is as old as the first add.
    let counts = await stats.counts(versionId);
    expect(counts).toMatchObject({ waiting: 2, active: 0, delayed: 0 });
    expect(counts.oldestWaitingSeconds).toBeGreaterThanOrEqual(0);
    expect(counts.oldestWaitingSeconds).toBeLessThanOrEqual((Date.now() - before) / 1000 + 1);

    // A worker takes one, as the consumer does (XREADGROUP through the workers' group).
    const q = keys.queue(versionId);
    await db.redis.xgroup('CREATE', q.stream, WORKERS_GROUP, '0');
    await db.redis.xreadgroup('GROUP', WORKERS_GROUP, 'w1', 'COUNT', 1, 'STREAMS', q.stream, '>');
    counts = await stats.counts(versionId);
    expect(counts).toMatchObject({ waiting: 1, active: 1, delayed: 0 });
    expect(counts.oldestWaitingSeconds).toBeGreaterThanOrEqual(0);

    // The second is taken too: nothing waits, so no age.
    await db.redis.xreadgroup('GROUP', WORKERS_GROUP, 'w2', 'COUNT', 1, 'STREAMS', q.stream, '>');
    expect(await stats.counts(versionId)).toEqual({ ...none, active: 2 });

    // A retry pausing sits in the delayed set.
    await db.redis.zadd(q.delayed, Date.now() + 60_000, 'retrying-request');
    expect(await stats.counts(versionId)).toEqual({ ...none, active: 2, delayed: 1 });
  });
});
