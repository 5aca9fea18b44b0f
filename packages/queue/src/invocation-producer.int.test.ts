import { type RedisHandle, startRedis } from '@nvcf/testing';
import { Queue } from 'bullmq';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvocationProducer } from './invocation-producer.ts';
import { createKeys } from './keys.ts';
import { createRedis, type RedisClient } from './redis-connection.ts';

let server: RedisHandle;
let redis: RedisClient;

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});

describe('invocation producer', () => {
  it('uses the request id as job id, so adding the same request twice is a no-op', async () => {
    const keys = createKeys(`p${uuidv4().slice(0, 8)}`);
    const producer = createInvocationProducer(redis, keys, { attempts: 3 });
    const versionId = uuidv4();
    const job = {
      requestId: uuidv4(),
      functionId: uuidv4(),
      versionId,
      input: { kind: 'json' as const, contentType: 'application/json', value: { a: 1 } },
      headers: {},
      enqueuedAt: Date.now(),
    };
    await producer.enqueue(job);
    await producer.enqueue({ ...job, input: { ...job.input, value: { a: 2 } } });
    expect(await producer.depth(versionId)).toBe(1);
    const queue = new Queue(keys.queueName(versionId), { connection: redis, prefix: keys.bullPrefix });
    const stored = await queue.getJob(job.requestId);
    expect(stored?.data.input.value).toEqual({ a: 1 });
    expect(stored?.opts.attempts).toBe(3);
    // Every key lives under the deployment's prefix.
    const all = await redis.keys('*');
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((k) => k.startsWith(`${keys.prefix}:`))).toEqual(all.filter((k) => k.includes(versionId)));
    await queue.close();
    await producer.close();
  });

  it("puts a routed job in the worker's own queue, and retiring the version empties every queue of it", async () => {
    const keys = createKeys(`p${uuidv4().slice(0, 8)}`);
    const producer = createInvocationProducer(redis, keys, { attempts: 3 });
    const versionId = uuidv4();
    const job = (requestId: string) => ({
      requestId,
      functionId: uuidv4(),
      versionId,
      input: { kind: 'json' as const, contentType: 'application/json', value: {} },
      headers: {},
      enqueuedAt: Date.now(),
    });
    const [shared, routed] = [uuidv4(), uuidv4()];
    await producer.enqueue(job(shared));
    await producer.enqueue(job(routed), { worker: 'worker-a' });
    const own = new Queue(keys.workerQueueName(versionId, 'worker-a'), { connection: redis, prefix: keys.bullPrefix });
    expect((await own.getJob(routed))?.id).toBe(routed);
    expect(await producer.depth(versionId)).toBe(1);
    const settled: string[] = [];
    await producer.retire(versionId, async (id) => {
      settled.push(id);
    });
    expect(settled.sort()).toEqual([shared, routed].sort());
    expect(await redis.keys(`${keys.bullPrefix}:fv-${versionId}*`)).toEqual([]);
    await own.close();
    await producer.close();
  });
});
