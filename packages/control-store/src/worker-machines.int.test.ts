import { randomUUID } from 'node:crypto';
import { createKeys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { describe, expect, it } from 'vitest';
import { createFunctionRegistry } from './function-registry.ts';

const db = usePrivateRedis();

describe('the machines of live workers (what cluster groups list)', () => {
  it('lists a worker while its heartbeat lives, drops it when it expires or says it is gone', async () => {
    const keys = createKeys(`m${randomUUID().slice(0, 8)}`);
    const registry = createFunctionRegistry(db.redis, keys);
    const versionId = randomUUID();
    const gpu = { pool: 'gpu', gpu: 'H100', instanceType: 'h100.x1', startedAt: 1_700_000_000_000 };
    const before = Date.now();
    await registry.heartbeat('w1', [versionId], 60_000, gpu);
    await registry.heartbeat('w2', [versionId], 60_000, { pool: 'default', gpu: 'CPU', instanceType: 'cpu.x1' });
    // Without a machine (an older worker) it serves its versions and is not listed.
    await registry.heartbeat('w3', [versionId], 60_000);
    const live = await registry.liveMachines();
    // Each record keeps its latest heartbeat's time (an instance's `instanceUpdatedAt`).
    for (const w of live) expect(w.beatAt).toBeGreaterThanOrEqual(before);
    expect(
      live.map(({ expiresAt: _, beatAt: __, ...w }) => w).sort((a, b) => a.workerId.localeCompare(b.workerId)),
    ).toEqual([
      { workerId: 'w1', ...gpu },
      { workerId: 'w2', pool: 'default', gpu: 'CPU', instanceType: 'cpu.x1' },
    ]);
    expect((await registry.liveWorkers([versionId]))[0]?.sort()).toEqual(['w1', 'w2', 'w3']);

    await registry.workerGone('w2');
    // A heartbeat whose time is already up: the entry is expired, not listed, and removed by that read.
    await registry.heartbeat('w1', [versionId], 0, gpu);
    expect(await registry.liveMachines()).toEqual([]);
    expect(await db.redis.hlen(keys.workers)).toBe(0);
  });
});
