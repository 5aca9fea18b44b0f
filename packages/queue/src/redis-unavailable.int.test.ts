import { randomUUID } from 'node:crypto';
import { startRedis } from '@nvcf/testing';
import { describe, expect, it } from 'vitest';
import { createInvocationProducer } from './invocation-producer.ts';
import { createKeys, newRequestId } from './keys.ts';
import { createRedis, isRedisOutOfMemory, isRedisUnavailable } from './redis-connection.ts';

describe('isRedisUnavailable', () => {
  it('reads a primary refusing writes for want of replicas as "try again", not as a bug', async () => {
    const server = await startRedis({ env: {} });
    const redis = createRedis(server.url);
    try {
      // What min-replicas-to-write does to a primary that has lost its replica.
      await redis.config('SET', 'min-replicas-to-write', '1');
      const err = await redis.set('k', 'v').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/^NOREPLICAS/);
      expect(isRedisUnavailable(err)).toBe(true);
    } finally {
      redis.disconnect();
      await server.close();
    }
  });

  it('reads a blocking read cut short by its primary being demoted as "try again"', async () => {
    const [primary, other] = await Promise.all([startRedis({ env: {} }), startRedis({ env: {} })]);
    const reader = createRedis(primary.url, { blocking: true });
    const admin = createRedis(primary.url);
    try {
      await admin.xgroup('CREATE', 's', 'g', '0', 'MKSTREAM');
      const read = reader.xreadgroup('GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 's', '>').catch((e: unknown) => e);
      while (!/blocked_clients:1/.test(await admin.info('clients'))) await new Promise((r) => setTimeout(r, 10));
      // What a failover does to the old primary.
      await admin.replicaof('127.0.0.1', new URL(other.url).port);
      const err = await read;
      expect((err as Error).message).toMatch(/^UNBLOCKED/);
      expect(isRedisUnavailable(err)).toBe(true);
    } finally {
      reader.disconnect();
      admin.disconnect();
      await Promise.all([primary.close(), other.close()]);
    }
  });

  it('keeps refusals of a bad command apart', () => {
    expect(isRedisUnavailable(new Error('ERR wrong number of arguments'))).toBe(false);
    expect(isRedisUnavailable(new Error('READONLY You can’t write against a read only replica.'))).toBe(true);
    expect(isRedisUnavailable(new Error('CLUSTERDOWN The cluster is down'))).toBe(true);
    // ioredis, when a cluster's slot map changed between queuing auto-pipelined commands and sending them.
    const regrouped = 'All keys in the pipeline should belong to the same slots allocation group';
    expect(isRedisUnavailable(new Error(regrouped))).toBe(true);
    expect(isRedisUnavailable(new Error('All the keys in a pipeline command should belong to the same slot'))).toBe(
      false,
    );
  });

  it('reads a full Redis (maxmemory, noeviction) as "try again": a command, a script, a function, a transaction', async () => {
    const server = await startRedis({ args: ['--maxmemory-policy', 'noeviction'] });
    const redis = createRedis(server.url);
    try {
      const producer = createInvocationProducer(redis, createKeys('oom'), { attempts: 1, ttlSeconds: 60 });
      const versionId = randomUUID();
      const job = () => ({
        requestId: newRequestId(versionId),
        functionId: 'f',
        versionId,
        input: { kind: 'json' as const, contentType: 'application/json', value: 1 },
        headers: {},
      });
      // The function library is loaded before Redis is full.
      await producer.enqueue(job());
      // Full: below what it holds already, every write that may grow memory is refused.
      await redis.config('SET', 'maxmemory', '1');
      const refusals = [
        await redis.set('k', 'v').catch((e: unknown) => e),
        await redis.eval("return redis.call('SET', KEYS[1], 'v')", 1, 'k').catch((e: unknown) => e),
        await producer.enqueue(job()).catch((e: unknown) => e),
        await redis
          .multi()
          .set('k', 'v')
          .exec()
          .catch((e: unknown) => e),
      ];
      for (const err of refusals) {
        expect(err).toBeInstanceOf(Error);
        expect(isRedisOutOfMemory(err), String(err)).toBe(true);
        expect(isRedisUnavailable(err)).toBe(true);
      }
      expect(isRedisOutOfMemory(new Error('ERR wrong number of arguments'))).toBe(false);
    } finally {
      redis.disconnect();
      await server.close();
    }
  });
});
