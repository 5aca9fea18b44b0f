import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { createCpuProbe } from './cpu-probe.ts';

const run = promisify(execFile);

/** One redis-benchmark test against the run's own Redis, with the Redis process's CPU during it. */
export interface RedisBenchmarkRow {
  test: string;
  clients: number;
  /** Commands each client sends before reading the replies (`-P`): 1 is a round trip per command. */
  pipeline: number;
  opsPerSecond: number;
  p50Ms: number;
  /** The redis-server process, % of one core, over the test. */
  redisCpuPercent: number;
  /** `opsPerSecond ÷ (redisCpuPercent / 100)`: what one fully busy Redis core would do at this mix. */
  opsPerCoreSecond: number;
}

/**
 * The request store's scripts in miniature: one EVALSHA running HGET, HSET and EXPIRE on one hash
 * (create-request, mark-in-progress and mark-delivered are this shape).
 */
const SCRIPT = `local s = redis.call('HGET', KEYS[1], 'state')
redis.call('HSET', KEYS[1], 'state', ARGV[1])
redis.call('EXPIRE', KEYS[1], 3600)
return s`;

/**
 * `redis-benchmark` (https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/benchmarks/)
 * runs on the same cores as Redis here: its own CPU is taken from Redis's, so `opsPerCoreSecond` (Redis's
 * CPU alone) is the figure that carries over to a dedicated shard, not `opsPerSecond`.
 */
export async function runRedisBenchmark(
  url: string,
  admin: Redis,
  redisPid: number,
  log: (msg: string) => void,
): Promise<RedisBenchmarkRow[]> {
  const { hostname, port } = new URL(url);
  const sha = (await admin.script('LOAD', SCRIPT)) as string;
  const tests: { test: string; pipeline: number; requests: number; args: string[] }[] = [
    { test: 'SET', pipeline: 1, requests: 100_000, args: ['-t', 'set'] },
    { test: 'GET', pipeline: 1, requests: 100_000, args: ['-t', 'get'] },
    { test: 'SET', pipeline: 16, requests: 400_000, args: ['-t', 'set'] },
    {
      test: 'EVALSHA (HGET+HSET+EXPIRE)',
      pipeline: 1,
      requests: 100_000,
      args: ['evalsha', sha, '1', 'rb:req:__rand_int__', 'done'],
    },
  ];
  const rows: RedisBenchmarkRow[] = [];
  const clients = 50;
  for (const t of tests) {
    const cpu = createCpuProbe({ redis: redisPid });
    cpu.start();
    const { stdout } = await run('redis-benchmark', [
      '-h',
      hostname,
      '-p',
      port,
      '-c',
      String(clients),
      '-n',
      String(t.requests),
      '-P',
      String(t.pipeline),
      '-r',
      '100000',
      '-q',
      '--csv',
      ...t.args,
    ]);
    const redisCpuPercent = cpu.stop().redis ?? Number.NaN;
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
    const line = stdout.trim().split('\n').at(-1) ?? '';
    const cells = line.split(',').map((c) => c.replace(/"/g, ''));
    const opsPerSecond = Number(cells[1]);
    if (!Number.isFinite(opsPerSecond)) throw new Error(`redis-benchmark ${t.test}: unexpected output '${stdout}'`);
    const row = {
      test: t.test,
      clients,
      pipeline: t.pipeline,
      opsPerSecond,
      p50Ms: Number(cells[4]),
      redisCpuPercent,
      opsPerCoreSecond: opsPerSecond / (redisCpuPercent / 100),
    };
    log(
      `redis-benchmark ${t.test} -P ${t.pipeline}: ${opsPerSecond.toFixed(0)} ops/s at ${redisCpuPercent.toFixed(0)} % ` +
        `Redis CPU = ${row.opsPerCoreSecond.toFixed(0)} ops per Redis core-second`,
    );
    rows.push(row);
  }
  return rows;
}
