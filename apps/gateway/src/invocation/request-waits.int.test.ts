import { randomUUID } from 'node:crypto';
import { createCompletionWaiter, createKeys, createRedis, createRequestStore, newGatewayId } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { describe, expect, it } from 'vitest';
import { createInvocationEvents } from './invocation-events.ts';
import { createRequestWaits } from './request-waits.ts';

const db = usePrivateRedis();

describe('following an existing request', () => {
  it('is reported (followed) only once the caller is authorized: another account’s polls count for nothing', async () => {
    const keys = createKeys(`waits-${randomUUID().slice(0, 8)}`);
    const store = createRequestStore(db.redis, keys, { ttlSeconds: 60 });
    const subscriber = createRedis(db.url);
    const completions = createCompletionWaiter(subscriber, keys, newGatewayId());
    await completions.start();
    try {
      const events = createInvocationEvents((err) => {
        throw err;
      });
      const followed: string[] = [];
      events.on('followed', (e) => followed.push(e.requestId));
      const waits = createRequestWaits(completions, store, events);
      const requestId = randomUUID();
      await store.create(requestId, randomUUID(), randomUUID(), 'alice');
      const as = (principal: string) => ({
        authorize: async (request: { principal: string }) => request.principal === principal,
      });

      expect(await waits.status(requestId, 1, as('mallory'))).toEqual({ kind: 'unknown', requestId });
      expect(await waits.follow(requestId, 1, as('mallory'))).toBeUndefined();
      expect(followed).toEqual([]);

      expect((await waits.status(requestId, 1, as('alice'))).kind).toBe('pending');
      expect(followed).toEqual([requestId]);
    } finally {
      await completions.close();
      subscriber.disconnect();
    }
  });
});
