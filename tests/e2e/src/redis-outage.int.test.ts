import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { type RestartableRedis, startRestartableRedis } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';

/**
 * Redis stalled (SIGSTOP) or gone: clients get a bounded answer — `/health` within a second, calls a
 * 503 problem+json with Retry-After within their window plus the command timeout, never a hang and
 * never a 500 — and the gateway recovers by itself when Redis is back.
 */
const COMMAND_TIMEOUT_MS = 500;
let redisDir: string;
let redis: RestartableRedis;
let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  redisDir = await mkdtemp(join(tmpdir(), 'nvcf-redis-outage-'));
  redis = await startRestartableRedis(redisDir, { appendfsync: 'always' });
  process.env.REDIS_URL = redis.url;
  h = await createHarness();
  await h.worker();
  gw = await h.gateway({ REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS), AUTH_CACHE_MS: '0' });
});
afterAll(async () => {
  redis?.resume();
  await h?.close();
  await redis?.stop({ kill: true });
  await rm(redisDir, { recursive: true, force: true });
});

const timed = async <T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
};

async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  expect(((await res.json()) as { detail: string }).detail).toMatch(/Redis/);
}

const invoke = (poll: number) =>
  pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), { 'nvcf-poll-seconds': String(poll) });

describe('Redis stalls and outages', () => {
  it('works before anything happens', async () => {
    expect((await invoke(30)).status).toBe(200);
  });

  it('a stalled Redis: /health answers 503 within a second, pexec 503 within its window, then recovery', async () => {
    redis.pause();
    try {
      const health = await timed(() => fetch(`${gw.url}/health`));
      expect(health.ms).toBeLessThan(1500 + 1000);
      await expectUnavailable(health.value);
      const call = await timed(() => invoke(5));
      expect(call.ms).toBeLessThan(5000 + COMMAND_TIMEOUT_MS + 3000);
      await expectUnavailable(call.value);
    } finally {
      redis.resume();
    }
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    expect((await invoke(30)).status).toBe(200);
  });

  it('Redis down: 503 + Retry-After, never a 500; back on the same port: served again without a restart', async () => {
    await redis.stop({ kill: true });
    await expectUnavailable(await fetch(`${gw.url}/health`));
    await expectUnavailable(await invoke(5));
    const list = await fetch(`${gw.url}/v2/nvcf/functions`, { headers: adminAuth });
    await expectUnavailable(list);

    await redis.start();
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await invoke(30)).status;
      if (status === 200) break;
      expect([503, 200]).toContain(status);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  });
});
