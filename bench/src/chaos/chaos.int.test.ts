import { describe, expect, it } from 'vitest';
import {
  gatewayRestart,
  redisRestart,
  redisStall,
  type ScenarioResult,
  type ScenarioScale,
  soak,
  workerKills,
} from './scenarios.ts';

/**
 * The fault suite (`pnpm chaos`) at a size CI can afford: real processes killed, restarted and paused
 * under load. Every call completes with the right answer, none runs twice, no 5xx but the documented
 * 503 + Retry-After, and no answer comes later than its window plus Redis's command timeout (1 s here).
 */
const scale: ScenarioScale = {
  calls: 200,
  concurrency: 16,
  stallSeconds: 3,
  soakCalls: 300,
  soakLargeEvery: 30,
  soakLargeBytes: 1024 * 1024,
  soakTtlWaitSeconds: 0,
};

function expectClean(r: ScenarioResult): void {
  const t = r.tally;
  expect({ lost: t.lost, wrong: t.wrong, ranTwice: t.ranTwice, serverErrors: t.serverErrors }).toEqual({
    lost: 0,
    wrong: 0,
    ranTwice: 0,
    serverErrors: 0,
  });
  expect(t.completed).toBe(t.calls);
  expect(t.unavailableWithoutRetryAfter).toBe(0);
  // Within its window plus the command timeout (1 s), with room for a loaded 2-core machine.
  expect(t.worstOverrunMs).toBeLessThan(1000 + 2000);
}

describe('faults under load (small pnpm chaos)', { timeout: 180_000 }, () => {
  it('workers SIGKILLed three times', async () => {
    const r = await workerKills(scale);
    expect(r.notes.kills).toBe(3);
    expectClean(r);
  });

  it('a gateway restarted, clients going on through it and another', async () => {
    expectClean(await gatewayRestart(scale));
  });

  it('Redis restarted (AOF everysec)', async () => {
    expectClean(await redisRestart(scale));
  });

  it('Redis stalled (SIGSTOP) for 3 s', async () => {
    expectClean(await redisStall(scale));
  });

  it('a soak with large inputs: Redis memory comes back, RSS stays bounded', async () => {
    const r = await soak(scale);
    expectClean(r);
    expect(Number(r.notes.redisDoneMB) - Number(r.notes.redisStartMB)).toBeLessThan(10);
  });
});
