import type { InvocationProcessor } from '@nvcf/queue';
import { Counter, Histogram, Registry } from 'prom-client';

const LABELS = ['function_id', 'function_version_id'] as const;

/**
 * Seconds from 1 ms to an hour: a job usually waits milliseconds, but a queue that backed up (no worker, a
 * scale-up in progress) must still land in a bucket, up to the longest a request may wait under the default TTLs.
 */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const RUN_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export type JobMetrics = ReturnType<typeof createJobMetrics>;

/**
 * The worker's queue-side metrics, per function version, in a registry of their own (served beside Triton's
 * model metrics, which count runs, not jobs): how long each job waited in its queue before this worker got it,
 * how long processing it took, and how it ended. Prometheus naming (https://prometheus.io/docs/practices/naming/).
 */
export function createJobMetrics() {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    queueWait: new Histogram({
      name: 'nvcf_worker_job_queue_wait_seconds',
      help: 'From a job joining its queue (its stream entry’s time) to this worker receiving it.',
      labelNames: LABELS,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    processing: new Histogram({
      name: 'nvcf_worker_job_processing_seconds',
      help: 'From this worker receiving a job to its result (or failure) being handed back to the queue.',
      labelNames: LABELS,
      buckets: RUN_BUCKETS,
      registers,
    }),
    jobs: new Counter({
      name: 'nvcf_worker_jobs_total',
      help: 'Jobs this worker processed, by the status of their result (`error` for an attempt that threw and is retried or failed).',
      labelNames: [...LABELS, 'status'] as const,
      registers,
    }),
  };
}

/** The processor, observed: each attempt's queue wait, processing time and outcome. */
export function meteredProcessor(processor: InvocationProcessor, metrics: JobMetrics): InvocationProcessor {
  return async (job, ctx) => {
    const labels = { function_id: job.functionId, function_version_id: job.versionId };
    const delivered = Date.now();
    // The entry's time is Redis's clock: a worker clock running behind must not make a wait negative.
    metrics.queueWait.observe(labels, Math.max(0, delivered - ctx.queuedAt) / 1000);
    let status = 'error';
    try {
      const result = await processor(job, ctx);
      // No result: the request was settled already (cancelled, or answered by another run): `settled`.
      status = result ? String(result.status) : 'settled';
      return result;
    } finally {
      metrics.processing.observe(labels, (Date.now() - delivered) / 1000);
      metrics.jobs.inc({ ...labels, status });
    }
  };
}
