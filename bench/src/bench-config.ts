/** What one `pnpm bench` run measures; every knob is an env variable so a run can be repeated exactly. */
export interface BenchConfig {
  /** Measurement window per (model, concurrency, mode), after the warm-up. */
  measureSeconds: number;
  /** Warm-up before each window; its requests are discarded. */
  warmupSeconds: number;
  concurrencies: number[];
  models: string[];
  /** LOG_LEVEL of the gateway and worker children: the product default is `info` (one access line per request). */
  childLogLevel: string;
  /** NVCF-POLL-SECONDS sent with each pexec: a request not answered 200 within it counts as an error. */
  pollSeconds: number;
}

function positive(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`);
  return value;
}

function list(env: NodeJS.ProcessEnv, name: string, def: string): string[] {
  return (env[name] || def)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const concurrencies = list(env, 'BENCH_CONCURRENCY', '1,32').map(Number);
  if (concurrencies.some((c) => !Number.isSafeInteger(c) || c < 1)) {
    throw new Error(`BENCH_CONCURRENCY must be positive integers, got '${env.BENCH_CONCURRENCY}'`);
  }
  return {
    measureSeconds: positive(env, 'BENCH_SECONDS', 4),
    warmupSeconds: positive(env, 'BENCH_WARMUP_SECONDS', 1),
    concurrencies,
    models: list(env, 'BENCH_MODELS', 'simple,classifier'),
    childLogLevel: env.BENCH_LOG_LEVEL || 'info',
    pollSeconds: positive(env, 'BENCH_POLL_SECONDS', 30),
  };
}
