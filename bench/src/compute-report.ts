import type { ThreadRole } from './compute-thread-probe.ts';
import type { LoadResult } from './load-driver.ts';

/** What the worker's statistics (GET /v2/models/<m>/stats) counted during one window. */
export interface ExecutedBatches {
  /** Requests' rows inferred (a batch of n counts n). */
  inferences: number;
  /** Model executions (session runs). */
  executions: number;
  /** inferences ÷ executions: 1 without batching. */
  averageBatch: number;
  /** Executions per executed batch size, from `batch_stats`. */
  bySize: Record<string, number>;
  /**
   * `batch_stats` compute_infer ÷ rows, µs: the wall time of a model run as the worker counts it (hand-off to the
   * instance thread, ONNX Runtime, the answer back on the event loop), per image.
   */
  inferUsPerRow: number;
  /** compute_infer over the window, % of one instance's time (summed over instances): how busy the slots were. */
  inferPercent: number;
}

export interface ComputeRunRecord extends LoadResult {
  model: string;
  /** What the row is within its comparison, e.g. `batching on`. */
  mode: string;
  /** % of one core per process during the window. */
  cpuPercent: Record<string, number>;
  /** The worker's CPU by thread role, % of one core: where its share in `cpuPercent` went. */
  workerThreads: Record<ThreadRole, number>;
  executed: ExecutedBatches;
}

export interface ComputeComparison {
  name: 'dynamic-batching' | 'instances';
  what: string;
  concurrency: number;
  candidate: string;
  baseline: string;
  /** Candidate ÷ baseline: rps (higher is better), p50 and p99 (lower is better). */
  throughput: number;
  p50: number;
  p99: number;
  /** The throughput ratio the project aims for. */
  target: number;
  met: boolean;
}

export interface ComputeReport {
  model: string;
  /** Cores this process may run on: comparison (b) cannot reach 2× with fewer than about 3. */
  cores: number;
  config: {
    warmupSeconds: number;
    measureSeconds: number;
    maxBatchSize: number;
    queueDelayUs: number;
    ortThreads: { intraOp: number; interOp: number };
    variants: { name: string; instances: number; dynamicBatching: boolean }[];
  };
  runs: ComputeRunRecord[];
  comparisons: ComputeComparison[];
}

/** Builds one comparison from its two runs (candidate ÷ baseline). */
export function compareCompute(
  name: ComputeComparison['name'],
  what: string,
  candidate: ComputeRunRecord,
  baseline: ComputeRunRecord,
  target: number,
): ComputeComparison {
  const throughput = candidate.rps / baseline.rps;
  return {
    name,
    what,
    concurrency: candidate.concurrency,
    candidate: candidate.model,
    baseline: baseline.model,
    throughput,
    p50: candidate.p50Ms / baseline.p50Ms,
    p99: candidate.p99Ms / baseline.p99Ms,
    target,
    met: throughput >= target,
  };
}
