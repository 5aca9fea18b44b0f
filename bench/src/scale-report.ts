import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadResult } from './load-driver.ts';
import { formatRedisCost, formatRedisTarget, type RedisCost } from './redis-cost.ts';
import { formatMonitorSummary, type MonitorSummary } from './redis-monitor.ts';
import { fmt, ms, renderTable, rps } from './report.ts';
import type { ScaleShape } from './scale-config.ts';
import type { RedisBenchmarkRow } from './scale-redis-benchmark.ts';

/** One measured window of `pnpm bench:scale`. */
export interface ScaleRow extends LoadResult {
  model: string;
  shape: ScaleShape;
  /** % of one core per process (`gateway-1`, `worker-2`, `redis`, `bench`, `other`). */
  cpuPercent: Record<string, number>;
  redis?: RedisCost;
}

/** Throughput rows on the scale model: each against the first (the baseline, measured in the same run). */
export interface ScaleComparison {
  shape: ScaleShape;
  rpsRatio: number;
  p50Ratio: number;
}

/** What Redis CPU per invocation means for a cluster: one shard is one Redis process on one core. */
export interface ShardCapacity {
  model: string;
  /** Where the figure comes from, e.g. `1x4 window`. */
  basis: string;
  redisCpuUsPerInvocation: number;
  commandsPerInvocation: number;
  /** 1e6 ÷ µs: invocations one Redis core could serve at 100 % busy, no headroom. */
  invocationsPerShard: number;
  /** commandsPerInvocation × invocationsPerShard. */
  commandsPerShard: number;
  shardsFor10k: number;
  shardsFor100k: number;
}

export interface ScaleReport {
  timestamp: string;
  machine: Record<string, unknown>;
  config: Record<string, unknown>;
  /** Request body bytes of each model driven. */
  payloadBytes: Record<string, number>;
  rows: ScaleRow[];
  comparisons: ScaleComparison[];
  /** Redis cost of other models, at the baseline shape (their throughput is not the point). */
  costRows: ScaleRow[];
  monitor: { model: string; concurrency: number; summary: MonitorSummary }[];
  redisBenchmark: RedisBenchmarkRow[];
  capacity: ShardCapacity[];
}

export const shapeLabel = (s: ScaleShape) => `${s.gateways} gw × ${s.workers} worker${s.workers === 1 ? '' : 's'}`;

export function compareScale(rows: ScaleRow[]): ScaleComparison[] {
  const base = rows[0];
  if (!base) return [];
  return rows.map((r) => ({ shape: r.shape, rpsRatio: r.rps / base.rps, p50Ratio: r.p50Ms / base.p50Ms }));
}

export function shardCapacity(model: string, basis: string, cost: RedisCost): ShardCapacity {
  const perShard = 1e6 / cost.cpuUs;
  return {
    model,
    basis,
    redisCpuUsPerInvocation: cost.cpuUs,
    commandsPerInvocation: cost.commands,
    invocationsPerShard: perShard,
    commandsPerShard: cost.commands * perShard,
    shardsFor10k: Math.ceil(10_000 / perShard),
    shardsFor100k: Math.ceil(100_000 / perShard),
  };
}

/** Per model, from its window with the most invocations: the background's share per invocation is smallest there. */
export function capacityOf(rows: ScaleRow[]): ShardCapacity[] {
  const best = new Map<string, ScaleRow>();
  for (const r of rows) {
    if (!r.redis || !(r.redis.cpuUs > 0)) continue;
    const b = best.get(r.model);
    if (!b || (b.redis?.invocations ?? 0) < r.redis.invocations) best.set(r.model, r);
  }
  return [...best.values()].map((r) =>
    shardCapacity(r.model, `${r.shape.gateways}x${r.shape.workers} window`, r.redis as RedisCost),
  );
}

const joined = (cpu: Record<string, number>, prefix: string) =>
  Object.keys(cpu)
    .filter((k) => k.startsWith(prefix))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)))
    .map((k) => fmt(cpu[k], 0))
    .join('/') || '-';

/**
 * CPU the product itself used (gateways, workers, Redis), % of one core: on a shared machine the cores it got
 * vary with the neighbours, so `rps ÷ (this / 100)`, invocations per core-second, compares rows where raw rps cannot.
 */
export function productCpuPercent(cpu: Record<string, number>): number {
  return Object.entries(cpu)
    .filter(([name]) => name === 'redis' || name.startsWith('gateway-') || name.startsWith('worker-'))
    .reduce((s, [, v]) => s + v, 0);
}

function formatScaleTable(report: ScaleReport): string {
  const header = [
    'shape',
    'model',
    'conc',
    'rps',
    'p50 ms',
    'p99 ms',
    'err',
    '÷ base rps',
    'gateways %',
    'workers %',
    'redis %',
    'bench %',
    'other %',
    'total %',
    'rps/core',
    'redis µs/inv',
    'redis cmds/inv',
  ];
  const rows = [...report.rows, ...report.costRows].map((r) => {
    const cmp = report.rows.includes(r)
      ? report.comparisons.find((c) => c.shape.gateways === r.shape.gateways && c.shape.workers === r.shape.workers)
      : undefined;
    const total = Object.values(r.cpuPercent).reduce((s, v) => s + v, 0);
    const product = productCpuPercent(r.cpuPercent);
    return [
      shapeLabel(r.shape),
      r.model,
      String(r.concurrency),
      rps(r.rps),
      ms(r.p50Ms),
      ms(r.p99Ms),
      String(r.errors),
      cmp ? `${fmt(cmp.rpsRatio)}×` : '-',
      joined(r.cpuPercent, 'gateway-'),
      joined(r.cpuPercent, 'worker-'),
      fmt(r.cpuPercent.redis, 0),
      fmt(r.cpuPercent.bench, 0),
      fmt(r.cpuPercent.other, 0),
      fmt(total, 0),
      product > 0 ? rps(r.rps / (product / 100)) : '-',
      fmt(r.redis?.cpuUs, 0),
      fmt(r.redis?.commands, 1),
    ];
  });
  return renderTable(header, rows, 3);
}

export function formatScaleReport(report: ScaleReport): string {
  const c = report.config as { warmupSeconds: number; measureSeconds: number; cpuInstances: number };
  const out = [
    `${c.warmupSeconds} s warm-up + ${c.measureSeconds} s window per row; each worker runs ${c.cpuInstances} model ` +
      `instance(s) on 1 ORT thread; CPU in % of one core (a/b/c: one figure per process); ÷ base = rps ÷ the first row's; ` +
      'rps/core = rps per core the gateways, workers and Redis used',
    '',
    formatScaleTable(report),
    '',
    'Redis per invocation, from INFO around each window (commands scripts run included; background such as heartbeats spread over the invocations):',
    ...[...report.rows, ...report.costRows]
      .filter((r) => r.redis)
      .map(
        (r) =>
          `  ${shapeLabel(r.shape)} ${r.model}: ${formatRedisCost(r.redis as RedisCost)}; ${formatRedisTarget(r.redis as RedisCost)}`,
      ),
  ];
  if (report.monitor.length > 0) {
    out.push('', 'Who sends them (MONITOR on the baseline shape, a window of its own):');
    for (const m of report.monitor) {
      out.push(`  ${m.model}: ${formatMonitorSummary(m.summary, `invocations at ${m.concurrency} in flight`)}`);
    }
  }
  if (report.redisBenchmark.length > 0) {
    out.push(
      '',
      'One Redis shard here (redis-benchmark on the same 2 cores; ops per Redis core-second = ops/s ÷ Redis CPU share):',
    );
    out.push(
      renderTable(
        ['test', 'clients', 'pipeline', 'ops/s', 'p50 ms', 'redis %', 'ops per redis core-s'],
        report.redisBenchmark.map((b) => [
          b.test,
          String(b.clients),
          String(b.pipeline),
          b.opsPerSecond.toFixed(0),
          ms(b.p50Ms),
          fmt(b.redisCpuPercent, 0),
          b.opsPerCoreSecond.toFixed(0),
        ]),
        1,
      ),
    );
  }
  if (report.capacity.length > 0) {
    out.push('', 'Capacity model (one shard = one Redis core at 100 %, no headroom):');
    for (const k of report.capacity) {
      out.push(
        `  ${k.model} (${k.basis}): ${k.redisCpuUsPerInvocation.toFixed(0)} µs Redis CPU/inv → ` +
          `${k.invocationsPerShard.toFixed(0)} inv/s per shard (${k.commandsPerShard.toFixed(0)} cmds/s); ` +
          `shards for 10k inv/s: ${k.shardsFor10k}, for 100k inv/s: ${k.shardsFor100k}`,
      );
    }
  }
  return out.join('\n');
}

/** Writes `<dir>/scale-<timestamp>.json` and `<dir>/scale-latest.json`; returns their paths. */
export async function writeScaleReport(dir: string, report: ScaleReport): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const paths = [join(dir, `scale-${report.timestamp.replace(/[:.]/g, '-')}.json`), join(dir, 'scale-latest.json')];
  for (const p of paths) await writeFile(p, json);
  return paths;
}
