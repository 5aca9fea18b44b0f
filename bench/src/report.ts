import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ComputeReport } from './compute-report.ts';
import type { KserveReport } from './kserve-report.ts';
import type { LoadResult } from './load-driver.ts';
import { formatRedisCost, formatRedisTarget, type RedisCost } from './redis-cost.ts';
import type { StreamReport } from './stream-section.ts';

/** In the order each (model, concurrency) runs them: grpc-invoke right after pexec, on the same stack. */
export const MODES = ['inproc', 'pexec', 'grpc-invoke', 'bullmq-floor'] as const;
export type Mode = (typeof MODES)[number];

export interface RunRecord extends LoadResult {
  model: string;
  mode: Mode;
  /** % of one core per process during the window. */
  cpuPercent: Record<string, number>;
  /** Redis's work per invocation during the window (not for inproc, which uses no Redis). */
  redis?: RedisCost;
}

export interface Comparison {
  model: string;
  concurrency: number;
  /** pexec rps / floor rps: 1 means the product adds nothing to the queue round trip's throughput. */
  pexecFloorThroughput: number;
  /** pexec p50 / floor p50. */
  pexecFloorP50: number;
  /** grpc-invoke rps / pexec rps: above 1, ModelInfer through the gateway's gRPC port outruns pexec. */
  grpcPexecThroughput?: number;
  /** grpc-invoke p50 / pexec p50. */
  grpcPexecP50?: number;
}

export interface BenchReport {
  timestamp: string;
  machine: Record<string, unknown>;
  config: Record<string, unknown>;
  /** The pexec section (empty when BENCH_SECTIONS leaves it out). */
  runs: RunRecord[];
  comparisons: Comparison[];
  /** The kserve section, when run. */
  kserve?: KserveReport;
  /** The stream section, when run. */
  stream?: StreamReport;
  /** The compute section, when run. */
  compute?: ComputeReport;
}

export function compare(runs: RunRecord[]): Comparison[] {
  const out: Comparison[] = [];
  for (const pexec of runs.filter((r) => r.mode === 'pexec')) {
    const find = (mode: Mode) =>
      runs.find((r) => r.mode === mode && r.model === pexec.model && r.concurrency === pexec.concurrency);
    const floor = find('bullmq-floor');
    if (!floor) continue;
    const grpc = find('grpc-invoke');
    out.push({
      model: pexec.model,
      concurrency: pexec.concurrency,
      pexecFloorThroughput: pexec.rps / floor.rps,
      pexecFloorP50: pexec.p50Ms / floor.p50Ms,
      ...(grpc ? { grpcPexecThroughput: grpc.rps / pexec.rps, grpcPexecP50: grpc.p50Ms / pexec.p50Ms } : {}),
    });
  }
  return out;
}

export const fmt = (v: number | undefined, digits = 2) =>
  v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);
export const rps = (v: number | undefined) => (v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
export const ms = (v: number | undefined) =>
  v === undefined || Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(3) : v.toFixed(1);

export function renderTable(header: string[], rows: string[][], leftColumns: number): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The main table: one row per model and concurrency, the four modes side by side, then the ratios. */
export function formatTable(report: BenchReport): string {
  const keys = [...new Set(report.runs.map((r) => `${r.model}\u0000${r.concurrency}`))];
  const rows = keys.map((k) => {
    const [model, c] = k.split('\u0000') as [string, string];
    const get = (mode: Mode) =>
      report.runs.find((r) => r.model === model && r.concurrency === Number(c) && r.mode === mode);
    const [a, b, g, f] = [get('inproc'), get('pexec'), get('grpc-invoke'), get('bullmq-floor')];
    const cmp = report.comparisons.find((x) => x.model === model && x.concurrency === Number(c));
    return [
      model,
      c,
      rps(a?.rps),
      ms(a?.p50Ms),
      ms(a?.p99Ms),
      rps(b?.rps),
      ms(b?.p50Ms),
      ms(b?.p99Ms),
      String(b?.errors ?? '-'),
      rps(g?.rps),
      ms(g?.p50Ms),
      ms(g?.p99Ms),
      String(g?.errors ?? '-'),
      rps(f?.rps),
      ms(f?.p50Ms),
      ms(f?.p99Ms),
      String(f?.errors ?? '-'),
      fmt(cmp?.pexecFloorThroughput),
      fmt(cmp?.pexecFloorP50),
      fmt(cmp?.grpcPexecThroughput),
      fmt(cmp?.grpcPexecP50),
    ];
  });
  const header = [
    'model',
    'conc',
    'inproc rps',
    'p50 ms',
    'p99 ms',
    'pexec rps',
    'p50 ms',
    'p99 ms',
    'err',
    'grpc-invoke rps',
    'p50 ms',
    'p99 ms',
    'err',
    'floor rps',
    'p50 ms',
    'p99 ms',
    'err',
    'pexec/floor rps',
    'pexec/floor p50',
    'grpc/pexec rps',
    'grpc/pexec p50',
  ];
  return renderTable(header, rows, 2);
}

/**
 * The per-invocation Redis cost line of each window that has one: the product (pexec, grpc-invoke) beside
 * the bare BullMQ round trip carrying the same payload.
 */
export function formatRedisCostLines(runs: RunRecord[]): string {
  return runs
    .filter((r) => r.redis)
    .map((r) => {
      const line = `${r.model} c=${r.concurrency} ${r.mode}: ${formatRedisCost(r.redis as RedisCost)}`;
      return r.mode === 'bullmq-floor' ? line : `${line}; ${formatRedisTarget(r.redis as RedisCost)}`;
    })
    .join('\n');
}

/** A window's CPU use per process; any section's runs qualify. */
export interface CpuRow {
  model: string;
  concurrency: number;
  mode: string;
  cpuPercent: Record<string, number>;
}

/** Where the CPU went in each window: the first place to look for the bottleneck on a small machine. */
export function formatCpuTable(runs: CpuRow[]): string {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.cpuPercent)))];
  if (names.length === 0) return '';
  const rows = runs.map((r) => {
    const total = Object.values(r.cpuPercent).reduce((s, v) => s + v, 0);
    return [r.model, String(r.concurrency), r.mode, ...names.map((n) => fmt(r.cpuPercent[n], 0)), fmt(total, 0)];
  });
  return renderTable(['model', 'conc', 'mode', ...names.map((n) => `${n} %`), 'total %'], rows, 3);
}

/**
 * A warning line when other processes took more than `thresholdPercent` of a core in some window
 * (the probe's `other`): on a small shared machine that alone can move a row by tens of percent.
 */
export function contentionWarning(runs: CpuRow[], thresholdPercent = 25): string {
  const busy = runs.filter((r) => (r.cpuPercent.other ?? 0) > thresholdPercent);
  if (busy.length === 0) return '';
  const rows = busy.map((r) => `${r.model} c=${r.concurrency} ${r.mode}`).join(', ');
  return `warning: other processes used > ${thresholdPercent}% of a core during ${busy.length} of ${runs.length} windows (${rows}); those figures are suspect`;
}

/** Writes `<dir>/<timestamp>.json` and `<dir>/latest.json`; returns their paths. */
export async function writeReport(dir: string, report: BenchReport): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const paths = [join(dir, `${report.timestamp.replace(/[:.]/g, '-')}.json`), join(dir, 'latest.json')];
  for (const p of paths) await writeFile(p, json);
  return paths;
}
