/**
 * `pnpm chaos`: the fault suite. Starts real processes (Redis with AOF, gateways, workers), breaks them
 * under load and reports what clients saw, as a table and as JSON beside the benchmark results
 * (`bench/results/chaos-latest.json`). Not part of `pnpm test`; a smaller run of each scenario is
 * (`chaos.int.test.ts`).
 *
 * CHAOS_SCENARIOS (all), CHAOS_CALLS (2000), CHAOS_CONCURRENCY (32), CHAOS_STALL_SECONDS (10),
 * CHAOS_SOAK_CALLS (100000), CHAOS_SOAK_LARGE_EVERY (1000: one call in that many carries a large input),
 * CHAOS_SOAK_LARGE_BYTES (4 MiB), CHAOS_SOAK_TTL_WAIT_SECONDS (75) tune it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  gatewayRestart,
  redisRestart,
  redisStall,
  type ScenarioResult,
  type ScenarioScale,
  soak,
  workerKills,
} from './scenarios.ts';

const env = (name: string, def: number) => Number(process.env[name] ?? def);
const scale: ScenarioScale = {
  calls: env('CHAOS_CALLS', 2000),
  concurrency: env('CHAOS_CONCURRENCY', 32),
  stallSeconds: env('CHAOS_STALL_SECONDS', 10),
  soakCalls: env('CHAOS_SOAK_CALLS', 100_000),
  soakLargeEvery: env('CHAOS_SOAK_LARGE_EVERY', 1000),
  soakLargeBytes: env('CHAOS_SOAK_LARGE_BYTES', 4 * 1024 * 1024),
  soakTtlWaitSeconds: env('CHAOS_SOAK_TTL_WAIT_SECONDS', 75),
};
const all = {
  'worker-kill': workerKills,
  'gateway-restart': gatewayRestart,
  'redis-restart': redisRestart,
  'redis-stall': redisStall,
  soak,
};
const chosen = (process.env.CHAOS_SCENARIOS ?? Object.keys(all).join(','))
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is keyof typeof all => s in all);

const results: ScenarioResult[] = [];
for (const name of chosen) {
  process.stdout.write(`› ${name}\n`);
  const r = await all[name](scale);
  results.push(r);
  process.stdout.write(`${row(r)}\n`);
}

process.stdout.write(`\n${header()}\n${results.map(row).join('\n')}\n`);
const outDir = resolve(import.meta.dirname, '../../results');
await mkdir(outDir, { recursive: true });
await writeFile(
  join(outDir, 'chaos-latest.json'),
  JSON.stringify({ at: new Date().toISOString(), scale, results }, null, 2),
);
process.stdout.write(`\nwrote ${join(outDir, 'chaos-latest.json')}\n`);
const bad = results.some((r) => r.tally.lost + r.tally.wrong + r.tally.ranTwice + r.tally.serverErrors > 0);
process.exit(bad ? 1 : 0);

function header(): string {
  return 'scenario                 calls  done  lost  wrong  twice  5xx  503(+RA)  worst overrun ms  seconds  notes';
}

function row(r: ScenarioResult): string {
  const t = r.tally;
  const notes = Object.entries(r.notes)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    r.name.padEnd(24),
    String(t.calls).padStart(5),
    String(t.completed).padStart(5),
    String(t.lost).padStart(5),
    String(t.wrong).padStart(6),
    String(t.ranTwice).padStart(6),
    String(t.serverErrors).padStart(4),
    `${t.unavailable}(${t.unavailable - t.unavailableWithoutRetryAfter})`.padStart(9),
    String(Math.max(0, t.worstOverrunMs)).padStart(17),
    r.seconds.toFixed(1).padStart(8),
    ` ${notes}`,
  ].join(' ');
}
