import { integer, positive } from './env-numbers.ts';

/**
 * The sections one run can measure (`BENCH_SECTIONS`, default all four):
 *   pexec   the invocation path (gateway → Redis → worker) over HTTP pexec and gateway gRPC ModelInfer,
 *           beside inproc and the bare BullMQ round trip,
 *   kserve  the worker's own KServe V2 surfaces (HTTP JSON, HTTP binary, gRPC) beside a bare HTTP echo,
 *   stream  SSE streaming of the `generative` function (time to first event, per-event overhead) beside an
 *           in-process greedy decode loop of the same model,
 *   compute the worker's compute on `densenet_onnx` over KServe HTTP binary: dynamic batching on vs off, and
 *           two model instances vs one.
 */
export const SECTIONS = ['pexec', 'kserve', 'stream', 'compute'] as const;
export type Section = (typeof SECTIONS)[number];

/** What one `pnpm bench` run measures; every knob is an env variable so a run can be repeated exactly. */
export interface BenchConfig {
  sections: Section[];
  /** Measurement window per (model, concurrency, mode), after the warm-up. */
  measureSeconds: number;
  /** Warm-up before each window; its requests are discarded. */
  warmupSeconds: number;
  concurrencies: number[];
  models: string[];
  /** LOG_LEVEL of the gateway and worker children: the product default is `info` (one access line per request). */
  childLogLevel: string;
  /**
   * NVCF-POLL-SECONDS sent with each pexec, and the deadline of each gateway gRPC ModelInfer: a request not
   * answered within it counts as an error.
   */
  pollSeconds: number;
  /** The kserve section's concurrencies and window: direct calls are fast, so a shorter window suffices. */
  kserveConcurrencies: number[];
  kserveMeasureSeconds: number;
  /** The stream section: tokens per completion, measured runs, warm-up runs (sequential). */
  streamTokens: number;
  streamRuns: number;
  streamWarmupRuns: number;
  /** The compute section: window per row (after BENCH_WARMUP_SECONDS), in flight per comparison, batcher delay. */
  computeMeasureSeconds: number;
  /** Requests in flight for dynamic batching on vs off: enough to fill batches of max_batch_size (8) many times over. */
  computeBatchingConcurrency: number;
  /** Requests in flight for 2 instances vs 1: enough to keep both instances busy. */
  computeInstancesConcurrency: number;
  /** `max_queue_delay_microseconds` of the batched variant. */
  computeQueueDelayUs: number;
}

function list(env: NodeJS.ProcessEnv, name: string, def: string): string[] {
  return (env[name] || def)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function concurrencyList(env: NodeJS.ProcessEnv, name: string, def: string): number[] {
  const values = list(env, name, def).map(Number);
  if (values.length === 0 || values.some((c) => !Number.isSafeInteger(c) || c < 1)) {
    throw new Error(`${name} must be positive integers, got '${env[name]}'`);
  }
  return values;
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const sections = list(env, 'BENCH_SECTIONS', SECTIONS.join(','));
  const unknown = sections.filter((s) => !(SECTIONS as readonly string[]).includes(s));
  if (sections.length === 0 || unknown.length > 0) {
    throw new Error(`BENCH_SECTIONS must list sections out of ${SECTIONS.join(', ')}, got '${env.BENCH_SECTIONS}'`);
  }
  return {
    sections: SECTIONS.filter((s) => sections.includes(s)),
    measureSeconds: positive(env, 'BENCH_SECONDS', 4),
    warmupSeconds: positive(env, 'BENCH_WARMUP_SECONDS', 1),
    concurrencies: concurrencyList(env, 'BENCH_CONCURRENCY', '1,32'),
    models: list(env, 'BENCH_MODELS', 'simple,classifier'),
    childLogLevel: env.BENCH_LOG_LEVEL || 'info',
    pollSeconds: positive(env, 'BENCH_POLL_SECONDS', 30),
    kserveConcurrencies: concurrencyList(env, 'BENCH_KSERVE_CONCURRENCY', '1,16'),
    kserveMeasureSeconds: positive(env, 'BENCH_KSERVE_SECONDS', 3),
    streamTokens: integer(env, 'BENCH_STREAM_TOKENS', 64, 2),
    streamRuns: integer(env, 'BENCH_STREAM_RUNS', 20, 1),
    streamWarmupRuns: integer(env, 'BENCH_STREAM_WARMUP_RUNS', 3, 0),
    computeMeasureSeconds: positive(env, 'BENCH_COMPUTE_SECONDS', 5),
    computeBatchingConcurrency: integer(env, 'BENCH_COMPUTE_BATCHING_CONCURRENCY', 64, 1),
    computeInstancesConcurrency: integer(env, 'BENCH_COMPUTE_INSTANCES_CONCURRENCY', 8, 1),
    computeQueueDelayUs: integer(env, 'BENCH_COMPUTE_QUEUE_DELAY_US', 1000, 0),
  };
}
