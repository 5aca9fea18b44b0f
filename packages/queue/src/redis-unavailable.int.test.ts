import { startRedis } from '@nvcf/testing';
import { describe, expect, it } from 'vitest';
import { createRedis, isRedisUnavailable } from './redis-connection.ts';

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
});
