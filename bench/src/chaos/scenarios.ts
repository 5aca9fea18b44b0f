import { type CallTally, countRanTwice, emptyTally, runCalls } from './calls.ts';
import { type ChaosCluster, startChaosCluster } from './cluster.ts';

/** One scenario's outcome: the call tally plus what it measured on the way. */
export interface ScenarioResult {
  name: string;
  tally: CallTally;
  seconds: number;
  notes: Record<string, number | string>;
}

export interface ScenarioScale {
  /** Calls of the kill/restart/outage scenarios. */
  calls: number;
  concurrency: number;
  /** How long Redis stays paused in the stall scenario. */
  stallSeconds: number;
  /** Calls of the soak, and how many of them carry a large input. */
  soakCalls: number;
  soakLargeEvery: number;
  soakLargeBytes: number;
  /** Wait for request TTLs to pass before the soak's last memory reading (seconds; 0: do not wait). */
  soakTtlWaitSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withCluster<T>(
  opts: Parameters<typeof startChaosCluster>[0],
  run: (c: ChaosCluster) => Promise<T>,
): Promise<T> {
  const cluster = await startChaosCluster(opts);
  try {
    return await run(cluster);
  } finally {
    await cluster.close();
  }
}

const callOptions = (c: ChaosCluster, pollSeconds: number, deadlineMs: number) => ({
  gateways: () => c.gateways.map((g) => g.url),
  adminKey: c.adminKey,
  pollSeconds,
  deadline: Date.now() + deadlineMs,
});

/** Workers SIGKILLed three times while calls are in flight: none lost, none run twice, all correct. */
export function workerKills(scale: ScenarioScale, kills = 3): Promise<ScenarioResult> {
  return withCluster({ workers: 2, gateways: 1 }, async (c) => {
    const tally = emptyTally();
    const t0 = Date.now();
    const every = Math.max(1, Math.floor(scale.calls / (kills + 1)));
    let killed = 0;
    const ids = await runCalls(scale.calls, scale.concurrency, callOptions(c, 5, 180_000), tally, async (done) => {
      if (killed < kills && done >= every * (killed + 1)) {
        killed++;
        const victim = c.workers.shift();
        victim?.child.kill('SIGKILL');
        await c.startWorker();
      }
    });
    tally.ranTwice = await countRanTwice(c.redis.url, c.keyPrefix, ids);
    return { name: 'worker SIGKILL ×3', tally, seconds: (Date.now() - t0) / 1000, notes: { kills: killed } };
  });
}

/** A gateway restarted under load while clients go on through it and another one: nothing lost. */
export function gatewayRestart(scale: ScenarioScale): Promise<ScenarioResult> {
  return withCluster({ workers: 1, gateways: 2 }, async (c) => {
    const tally = emptyTally();
    const t0 = Date.now();
    let restarted = 0;
    const ids = await runCalls(scale.calls, scale.concurrency, callOptions(c, 5, 180_000), tally, async (done) => {
      if (restarted === 0 && done >= scale.calls / 3) {
        restarted++;
        const victim = c.gateways.shift();
        if (!victim) return;
        await victim.child.stop(5000);
        await c.startGateway(Number(new URL(victim.url).port));
      }
    });
    tally.ranTwice = await countRanTwice(c.redis.url, c.keyPrefix, ids);
    return { name: 'gateway restart', tally, seconds: (Date.now() - t0) / 1000, notes: { restarts: restarted } };
  });
}

/**
 * Redis restarted (AOF everysec, SIGTERM) under load: every accepted request completes; meanwhile
 * clients get 503 + Retry-After, never a 500, never a hang past their window.
 */
export function redisRestart(scale: ScenarioScale): Promise<ScenarioResult> {
  return withCluster({ workers: 1, gateways: 1 }, async (c) => {
    const tally = emptyTally();
    const t0 = Date.now();
    let restarted = 0;
    let downMs = 0;
    const ids = await runCalls(scale.calls, scale.concurrency, callOptions(c, 5, 180_000), tally, async (done) => {
      if (restarted === 0 && done >= scale.calls / 3) {
        restarted++;
        const down = Date.now();
        await c.redis.stop();
        await sleep(1000);
        await c.redis.start();
        downMs = Date.now() - down;
      }
    });
    tally.ranTwice = await countRanTwice(c.redis.url, c.keyPrefix, ids);
    return { name: 'Redis restart', tally, seconds: (Date.now() - t0) / 1000, notes: { downMs } };
  });
}

/** Redis paused (SIGSTOP) under load: every call answers within its window plus the command timeout. */
export function redisStall(scale: ScenarioScale): Promise<ScenarioResult> {
  return withCluster({ workers: 1, gateways: 1 }, async (c) => {
    const tally = emptyTally();
    const t0 = Date.now();
    let stalled = 0;
    const ids = await runCalls(scale.calls, scale.concurrency, callOptions(c, 2, 180_000), tally, async (done) => {
      if (stalled === 0 && done >= scale.calls / 3) {
        stalled++;
        c.redis.pause();
        await sleep(scale.stallSeconds * 1000);
        c.redis.resume();
      }
    });
    tally.ranTwice = await countRanTwice(c.redis.url, c.keyPrefix, ids);
    return {
      name: `Redis stall ${scale.stallSeconds}s`,
      tally,
      seconds: (Date.now() - t0) / 1000,
      notes: { stallSeconds: scale.stallSeconds, commandTimeoutMs: 1000 },
    };
  });
}

/**
 * Many calls, some with large inputs: Redis memory comes back once the work is done (and, when
 * waited for, once the request TTLs are over); gateway and worker RSS stay bounded.
 */
export function soak(scale: ScenarioScale): Promise<ScenarioResult> {
  const ttl = 60;
  return withCluster({ workers: 1, gateways: 1, env: { REQUEST_TTL_SECONDS: String(ttl) } }, async (c) => {
    const tally = emptyTally();
    const t0 = Date.now();
    const gw = c.gateways[0]?.child.pid ?? 0;
    const wk = c.workers[0]?.pid ?? 0;
    const rss = { gwStart: await c.rssKiB(gw), wkStart: await c.rssKiB(wk), gwPeak: 0, wkPeak: 0 };
    const memStart = await c.redis.usedMemory();
    let memPeak = memStart;
    const sampler = setInterval(() => {
      void Promise.all([c.rssKiB(gw), c.rssKiB(wk), c.redis.usedMemory()]).then(([g, w, m]) => {
        rss.gwPeak = Math.max(rss.gwPeak, g);
        rss.wkPeak = Math.max(rss.wkPeak, w);
        memPeak = Math.max(memPeak, m);
      });
    }, 250);
    const small = Math.ceil(scale.soakCalls * (1 - 1 / scale.soakLargeEvery));
    const large = scale.soakCalls - small;
    const opts = callOptions(c, 30, 600_000);
    const ids = [
      ...(await runCalls(small, scale.concurrency, opts, tally)),
      ...(await runCalls(large, Math.min(4, scale.concurrency), { ...opts, padBytes: scale.soakLargeBytes }, tally)),
    ];
    clearInterval(sampler);
    tally.ranTwice = await countRanTwice(c.redis.url, c.keyPrefix, ids);
    const memDone = await c.redis.usedMemory();
    if (scale.soakTtlWaitSeconds > 0) await sleep(scale.soakTtlWaitSeconds * 1000);
    const memEnd = await c.redis.usedMemory();
    return {
      name: `soak ${scale.soakCalls}`,
      tally,
      seconds: (Date.now() - t0) / 1000,
      notes: {
        redisStartMB: mb(memStart),
        redisPeakMB: mb(memPeak),
        redisDoneMB: mb(memDone),
        redisEndMB: mb(memEnd),
        ttlWaitedSeconds: scale.soakTtlWaitSeconds,
        gatewayRssMB: `${kib(rss.gwStart)}/${kib(rss.gwPeak)}/${kib(await c.rssKiB(gw))}`,
        workerRssMB: `${kib(rss.wkStart)}/${kib(rss.wkPeak)}/${kib(await c.rssKiB(wk))}`,
      },
    };
  });
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const kib = (k: number) => Math.round(k / 1024);
