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

  it('keeps refusals of a bad command apart', () => {
    expect(isRedisUnavailable(new Error('ERR wrong number of arguments'))).toBe(false);
    expect(isRedisUnavailable(new Error('READONLY You can’t write against a read only replica.'))).toBe(true);
    expect(isRedisUnavailable(new Error('CLUSTERDOWN The cluster is down'))).toBe(true);
  });
});
