import { AppError } from '@nvcf/protocol';
import type { InvocationProducer } from '@nvcf/queue';
import { describe, expect, it } from 'vitest';
import { createQueueGuard } from './queue-guard.ts';

/** The producer's byte read as the seam: what the account holds in Redis, and how often it is asked. */
function producerHolding(bytes: number) {
  const state = { bytes, reads: 0 };
  const producer: Pick<InvocationProducer, 'accountBytes' | 'waiting'> = {
    accountBytes: async () => {
      state.reads++;
      await new Promise((r) => setTimeout(r, 5));
      return state.bytes;
    },
    waiting: async () => 0,
  };
  return { state, producer };
}

describe('queue guard: bytes per account', () => {
  it('calls arriving together share one read and count into it: the bound holds for a burst', async () => {
    const { state, producer } = producerHolding(1000);
    const guard = createQueueGuard(producer, { maxDepth: 0, maxAccountBytes: 4000, cacheMs: 60_000 });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => guard.admitBytes('team-b', 1000)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    const refusal = (outcomes[3] as PromiseRejectedResult).reason;
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'RESOURCE_EXHAUSTED', retryAfterSeconds: 5 });
    expect(state.reads).toBe(1);
    // Another account has its own count.
    await guard.admitBytes('team-c', 3000);
  });

  it('reads again once the cache has aged: bytes released meanwhile admit again', async () => {
    const { state, producer } = producerHolding(4000);
    const guard = createQueueGuard(producer, { maxDepth: 0, maxAccountBytes: 4000, cacheMs: 20 });
    await expect(guard.admitBytes('team-b', 1)).rejects.toThrow(/bound \(4000\)/);
    state.bytes = 0;
    await new Promise((r) => setTimeout(r, 30));
    await guard.admitBytes('team-b', 4000);
    expect(state.reads).toBe(2);
  });

  it('refuses a request larger than the bound itself as too large, not as one to retry', async () => {
    const { state, producer } = producerHolding(0);
    const guard = createQueueGuard(producer, { maxDepth: 0, maxAccountBytes: 4000, cacheMs: 60_000 });
    await expect(guard.admitBytes('team-b', 4001)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(state.reads).toBe(0);
  });

  it('is off at 0', async () => {
    const { state, producer } = producerHolding(1e12);
    await createQueueGuard(producer, { maxDepth: 0, maxAccountBytes: 0, cacheMs: 0 }).admitBytes('a', 1e9);
    expect(state.reads).toBe(0);
  });
});
