import { integer, positive } from './env-numbers.ts';

/** One deployment shape of `pnpm bench:scale`: gateway and worker processes on one Redis. */
export interface ScaleShape {
  gateways: number;
  workers: number;
}

/** What one `pnpm bench:scale` run measures; every knob is an env variable so a run can be repeated exactly. */
export interface ScaleConfig {
  /** Shapes in the order measured; the first is the baseline every row is divided by. */
  rows: ScaleShape[];
  /** The model invoked over pexec: `densenet_onnx` (binary tensor body) or a `pnpm bench` model (JSON body). */
  model: string;
  /** Requests in flight, split evenly over the row's gateways: enough to keep every worker busy. */
  concurrency: number;
  warmupSeconds: number;
  measureSeconds: number;
  /** WORKER_CPU_INSTANCES of each worker: with 1, each worker process runs the model on one thread. */
  cpuInstances: number;
  /** WORKER_CONCURRENCY of each worker; 0 follows the model (the product default). */
  workerConcurrency: number;
  /**
   * Models whose Redis cost is also measured at the baseline shape (default `simple`: a small request, where
   * Redis work is all there is), at `costConcurrency` in flight.
   */
  costModels: string[];
  costConcurrency: number;
  /** Invocations recorded with MONITOR on the baseline shape (client vs script commands); 0 skips. */
  monitorInvocations: number;
  /** Whether to measure one Redis shard's ops/s with redis-benchmark beside the rows. */
  redisBenchmark: boolean;
  childLogLevel: string;
  pollSeconds: number;
}

const SHAPE = /^(\d+)x(\d+)$/;

/** `BENCH_SCALE_ROWS`: comma-separated `<gateways>x<workers>`, e.g. `1x1,1x2,1x4,2x2,2x4`. */
export function parseShapes(raw: string): ScaleShape[] {
  const shapes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = SHAPE.exec(s);
      const [gateways, workers] = [Number(m?.[1]), Number(m?.[2])];
      if (!m || gateways < 1 || workers < 1) {
        throw new Error(`BENCH_SCALE_ROWS: '${s}' is not <gateways>x<workers> with both ≥ 1`);
      }
      return { gateways, workers };
    });
  if (shapes.length === 0) throw new Error('BENCH_SCALE_ROWS names no shape');
  return shapes;
}

export function loadScaleConfig(env: NodeJS.ProcessEnv = process.env): ScaleConfig {
  const redisBenchmark = env.BENCH_SCALE_REDIS_BENCHMARK;
  if (redisBenchmark !== undefined && !['', '0', '1'].includes(redisBenchmark)) {
    throw new Error(`BENCH_SCALE_REDIS_BENCHMARK must be 0 or 1, got '${redisBenchmark}'`);
  }
  return {
    rows: parseShapes(env.BENCH_SCALE_ROWS || '1x1,1x2,1x4,2x2,2x4'),
    model: env.BENCH_SCALE_MODEL || 'densenet_onnx',
    concurrency: integer(env, 'BENCH_SCALE_CONCURRENCY', 16, 1),
    warmupSeconds: positive(env, 'BENCH_SCALE_WARMUP_SECONDS', 3),
    measureSeconds: positive(env, 'BENCH_SCALE_SECONDS', 10),
    cpuInstances: integer(env, 'BENCH_SCALE_CPU_INSTANCES', 1, 0),
    workerConcurrency: integer(env, 'BENCH_SCALE_WORKER_CONCURRENCY', 0, 0),
    costModels: (env.BENCH_SCALE_COST_MODELS ?? 'simple')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    costConcurrency: integer(env, 'BENCH_SCALE_COST_CONCURRENCY', 8, 1),
    monitorInvocations: integer(env, 'BENCH_SCALE_MONITOR_INVOCATIONS', 40, 0),
    redisBenchmark: redisBenchmark !== '0',
    childLogLevel: env.BENCH_LOG_LEVEL || 'info',
    pollSeconds: positive(env, 'BENCH_POLL_SECONDS', 30),
  };
}
