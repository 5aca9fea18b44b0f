import type { ServerTimings } from './kserve-stack.ts';
import type { LoadResult } from './load-driver.ts';
import { fmt, ms, renderTable, rps } from './report.ts';

/** Run order: each floor right after the worker row it is compared with, so drift between them stays small. */
export const KSERVE_MODES = ['http-json', 'echo-json', 'http-binary', 'echo-binary', 'grpc'] as const;
export type KserveMode = (typeof KSERVE_MODES)[number];
export type WorkerMode = Exclude<KserveMode, 'echo-json' | 'echo-binary'>;
export const WORKER_MODES: readonly WorkerMode[] = ['http-json', 'http-binary', 'grpc'];

/**
 * Each worker row's floor: the echo of the body that surface's request is closest to. gRPC has no HTTP/1.1
 * echo of its own; the binary body is its nearest (same raw bytes, small header).
 */
export const FLOOR_OF: Readonly<Record<WorkerMode, 'echo-json' | 'echo-binary'>> = {
  'http-json': 'echo-json',
  'http-binary': 'echo-binary',
  grpc: 'echo-binary',
};

/** The project's target: binary HTTP p50 for `simple` at concurrency 1 within 2× the echo floor's. */
export const TARGET_P50_RATIO = 2;

export interface KserveRunRecord extends LoadResult {
  model: string;
  mode: KserveMode;
  /** % of one core per process during the window. */
  cpuPercent: Record<string, number>;
  /** Worker rows: the worker's own time per request in the window (statistics extension). */
  server?: ServerTimings;
}

export interface KserveComparison {
  model: string;
  concurrency: number;
  mode: WorkerMode;
  floor: 'echo-json' | 'echo-binary';
  /** Worker rps / floor rps. */
  throughput: number;
  /** Worker p50 / floor p50, and the same for p99. */
  p50: number;
  p99: number;
}

/** Bytes on the wire per model: what the echo floor is sized by. */
export interface WireSizes {
  json: { request: number; response: number };
  binary: { request: number; response: number };
}

export interface KserveReport {
  config: { concurrencies: number[]; warmupSeconds: number; measureSeconds: number; workerConcurrency: number };
  sizes: Record<string, WireSizes>;
  runs: KserveRunRecord[];
  comparisons: KserveComparison[];
  target: { what: string; ratio: number | null; limit: number; met: boolean | null };
}

export function compareKserve(runs: KserveRunRecord[]): KserveComparison[] {
  const out: KserveComparison[] = [];
  for (const run of runs) {
    if (!(WORKER_MODES as readonly string[]).includes(run.mode)) continue;
    const mode = run.mode as WorkerMode;
    const floorMode = FLOOR_OF[mode];
    const floor = runs.find((r) => r.mode === floorMode && r.model === run.model && r.concurrency === run.concurrency);
    if (!floor) continue;
    out.push({
      model: run.model,
      concurrency: run.concurrency,
      mode,
      floor: floorMode,
      throughput: run.rps / floor.rps,
      p50: run.p50Ms / floor.p50Ms,
      p99: run.p99Ms / floor.p99Ms,
    });
  }
  return out;
}

export function kserveTarget(comparisons: KserveComparison[]): KserveReport['target'] {
  const row = comparisons.find((c) => c.model === 'simple' && c.concurrency === 1 && c.mode === 'http-binary');
  const ratio = row && Number.isFinite(row.p50) ? row.p50 : null;
  return {
    what: 'simple c=1: HTTP binary p50 / echo (binary body) p50',
    ratio,
    limit: TARGET_P50_RATIO,
    met: ratio === null ? null : ratio <= TARGET_P50_RATIO,
  };
}

/** One row per worker surface, its echo floor beside it, then the ratios to that floor. */
export function formatKserveTable(report: KserveReport): string {
  const find = (model: string, c: number, mode: KserveMode) =>
    report.runs.find((r) => r.model === model && r.concurrency === c && r.mode === mode);
  const rows = report.comparisons.map((cmp) => {
    const w = find(cmp.model, cmp.concurrency, cmp.mode);
    const f = find(cmp.model, cmp.concurrency, cmp.floor);
    return [
      cmp.model,
      String(cmp.concurrency),
      cmp.mode,
      rps(w?.rps),
      ms(w?.p50Ms),
      ms(w?.p99Ms),
      String(w?.errors ?? '-'),
      cmp.floor,
      rps(f?.rps),
      ms(f?.p50Ms),
      ms(f?.p99Ms),
      String(f?.errors ?? '-'),
      fmt(cmp.throughput),
      fmt(cmp.p50),
      fmt(cmp.p99),
    ];
  });
  const header = [
    'model',
    'conc',
    'worker',
    'rps',
    'p50 ms',
    'p99 ms',
    'err',
    'floor',
    'rps',
    'p50 ms',
    'p99 ms',
    'err',
    '/floor rps',
    '/floor p50',
    '/floor p99',
  ];
  return renderTable(header, rows, 3);
}

/** Request → response bytes of each model's JSON and binary forms. */
export function formatSizes(sizes: Record<string, WireSizes>): string {
  return Object.entries(sizes)
    .map(
      ([m, s]) =>
        `${m}: JSON ${s.json.request} B → ${s.json.response} B, binary ${s.binary.request} B → ${s.binary.response} B`,
    )
    .join('\n');
}

/** The worker's own time per request (statistics extension) beside the client's p50: the rest is transport. */
export function formatServerTable(report: KserveReport): string {
  const us = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(0));
  const rows = report.runs
    .filter((r) => r.server)
    .map((r) => {
      const s = r.server as ServerTimings;
      return [
        r.model,
        String(r.concurrency),
        r.mode,
        us(r.p50Ms * 1000),
        us(s.successUs),
        us(s.queueUs),
        us(s.computeInputUs),
        us(s.computeInferUs),
        us(s.computeOutputUs),
      ];
    });
  const header = ['model', 'conc', 'worker', 'client p50', 'server', 'queue', 'input', 'infer', 'output'];
  return renderTable(header, rows, 3);
}
