import { type RedisHandle, startRedis } from '@nvcf/testing';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvocationProducer } from './invocation-producer.ts';
import { createKeys } from './keys.ts';
import { createRedis } from './redis-connection.ts';

let server: RedisHandle;
let redis: Redis;

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
});
