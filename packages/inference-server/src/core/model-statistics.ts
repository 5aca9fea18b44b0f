/**
 * Per model version counters and cumulative durations, in the shape of Triton's statistics extension
 * (Triton statistics extension). One instance per loaded model version; the HTTP, gRPC and queue
 * paths all record into it, and the Prometheus metrics are read from it. As in Triton, requests and
 * executions are counted apart: the dynamic batcher runs several requests in one execution.
 */
export interface StatDuration {
  count: number;
  ns: number;
}

export interface InferenceStats {
  success: StatDuration;
  fail: StatDuration;
  queue: StatDuration;
  compute_input: StatDuration;
  compute_infer: StatDuration;
  compute_output: StatDuration;
  cache_hit: StatDuration;
  cache_miss: StatDuration;
}

export interface BatchStats {
  batch_size: number;
  compute_input: StatDuration;
  compute_infer: StatDuration;
  compute_output: StatDuration;
}

export interface ModelStatisticsSnapshot {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: InferenceStats;
  batch_stats: BatchStats[];
  memory_usage: never[];
  response_stats: Record<string, never>;
}

/**
 * Everything recorded for one batch size: what Triton v1's per-batch-size `infer_stats` report (success and
 * failure totals, queue and compute phases). `snapshot()` keeps to the v2 shape, so this is a separate read.
 */
export interface BatchSizeStats {
  batch_size: number;
  success: StatDuration;
  fail: StatDuration;
  queue: StatDuration;
  compute_input: StatDuration;
  compute_infer: StatDuration;
  compute_output: StatDuration;
}

export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';

/** Durations of one model execution's phases, in nanoseconds. */
export interface ExecutionTimings {
  computeInputNs: number;
  computeInferNs: number;
  computeOutputNs: number;
}

/** Durations of one request's phases, in nanoseconds: those of the execution it ran in, and its own waits. */
export interface RequestTimings extends ExecutionTimings {
  queueNs: number;
  /** Arrival to response. */
  totalNs: number;
}

const zero = (): StatDuration => ({ count: 0, ns: 0 });
const add = (d: StatDuration, ns: number) => {
  d.count++;
  d.ns += ns;
};

export class ModelStatistics {
  readonly name: string;
  readonly version: string;
  #lastInference = 0;
  #inferenceCount = 0;
  #executionCount = 0;
  #pending = 0;
  readonly #stats: InferenceStats = {
    success: zero(),
    fail: zero(),
    queue: zero(),
    compute_input: zero(),
    compute_infer: zero(),
    compute_output: zero(),
    cache_hit: zero(),
    cache_miss: zero(),
  };
  /** Per request batch size (Triton v1 `infer_stats`). */
  readonly #batches = new Map<number, BatchSizeStats>();
  /** Per executed batch size (Triton v2 `batch_stats`). */
  readonly #executions = new Map<number, BatchStats>();
  readonly #failures: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };

  constructor(name: string, version: string) {
    this.name = name;
    this.version = version;
  }

  /** Requests accepted and not yet answered. */
  get pending(): number {
    return this.#pending;
  }

  started(): void {
    this.#pending++;
  }

  /** One request answered: `batchSize` is its own rows (inference_count counts rows, as Triton's does). */
  succeeded(batchSize: number, t: RequestTimings): void {
    this.#pending--;
    this.#lastInference = Date.now();
    this.#inferenceCount += batchSize;
    add(this.#stats.success, t.totalNs);
    add(this.#stats.queue, t.queueNs);
    add(this.#stats.compute_input, t.computeInputNs);
    add(this.#stats.compute_infer, t.computeInferNs);
    add(this.#stats.compute_output, t.computeOutputNs);
    const b = this.#batch(batchSize);
    add(b.success, t.totalNs);
    add(b.queue, t.queueNs);
    add(b.compute_input, t.computeInputNs);
    add(b.compute_infer, t.computeInferNs);
    add(b.compute_output, t.computeOutputNs);
  }

  /** One model execution that succeeded, of `batchSize` rows however many requests it served. */
  executed(batchSize: number, t: ExecutionTimings): void {
    this.#executionCount++;
    let b = this.#executions.get(batchSize);
    if (!b) {
      b = { batch_size: batchSize, compute_input: zero(), compute_infer: zero(), compute_output: zero() };
      this.#executions.set(batchSize, b);
    }
    add(b.compute_input, t.computeInputNs);
    add(b.compute_infer, t.computeInferNs);
    add(b.compute_output, t.computeOutputNs);
  }

  /**
   * `reason` follows Triton's failure metric label: REJECTED, CANCELED, BACKEND or OTHER. `batchSize` is given
   * once the request's batch size was found valid (never a client's unchecked number: each one is a map entry).
   */
  failed(totalNs: number, reason: FailureReason, batchSize?: number): void {
    this.#pending--;
    add(this.#stats.fail, totalNs);
    this.#failures[reason]++;
    if (batchSize !== undefined) add(this.#batch(batchSize).fail, totalNs);
  }

  /** Per batch size, smallest first, with success, failure and queue totals (Triton v1 `infer_stats`). */
  batchSizeStats(): BatchSizeStats[] {
    const copy = (d: StatDuration) => ({ count: d.count, ns: d.ns });
    return [...this.#batches.values()]
      .sort((a, b) => a.batch_size - b.batch_size)
      .map((b) => ({
        batch_size: b.batch_size,
        success: copy(b.success),
        fail: copy(b.fail),
        queue: copy(b.queue),
        compute_input: copy(b.compute_input),
        compute_infer: copy(b.compute_infer),
        compute_output: copy(b.compute_output),
      }));
  }

  #batch(batchSize: number): BatchSizeStats {
    let b = this.#batches.get(batchSize);
    if (!b) {
      b = {
        batch_size: batchSize,
        success: zero(),
        fail: zero(),
        queue: zero(),
        compute_input: zero(),
        compute_infer: zero(),
        compute_output: zero(),
      };
      this.#batches.set(batchSize, b);
    }
    return b;
  }

  /** Failures by reason, for the Prometheus failure counter. */
  failures(): Readonly<Record<FailureReason, number>> {
    return { ...this.#failures };
  }

  snapshot(): ModelStatisticsSnapshot {
    const copy = (d: StatDuration) => ({ count: d.count, ns: d.ns });
    const s = this.#stats;
    return {
      name: this.name,
      version: this.version,
      last_inference: this.#lastInference,
      inference_count: this.#inferenceCount,
      execution_count: this.#executionCount,
      inference_stats: {
        success: copy(s.success),
        fail: copy(s.fail),
        queue: copy(s.queue),
        compute_input: copy(s.compute_input),
        compute_infer: copy(s.compute_infer),
        compute_output: copy(s.compute_output),
        cache_hit: copy(s.cache_hit),
        cache_miss: copy(s.cache_miss),
      },
      // Executed batch sizes, with compute time per execution, as Triton's v2 batch_stats.
      batch_stats: [...this.#executions.values()]
        .sort((a, b) => a.batch_size - b.batch_size)
        .map((b) => ({
          batch_size: b.batch_size,
          compute_input: copy(b.compute_input),
          compute_infer: copy(b.compute_infer),
          compute_output: copy(b.compute_output),
        })),
      memory_usage: [],
      response_stats: {},
    };
  }
}
