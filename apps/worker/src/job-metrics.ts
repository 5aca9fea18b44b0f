import type { JobListener } from '@nvcf/queue';
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

/**
 * A consumer's job listener that observes each try: its queue wait when it starts, then its processing time and how
 * it ended (the result's status; `settled` for no result, the request being settled already; `error` for a throw).
 */
export function observeJobs(metrics: JobMetrics): JobListener {
  return (event) => {
    const labels = { function_id: event.job.functionId, function_version_id: event.job.versionId };
    if (event.type === 'started') {
      // The entry's time is Redis's clock: a worker clock running behind must not make a wait negative.
      metrics.queueWait.observe(labels, Math.max(0, event.startedAt - event.ctx.queuedAt) / 1000);
      return;
    }
    metrics.processing.observe(labels, (event.at - event.startedAt) / 1000);
    const status = event.type === 'threw' ? 'error' : event.result ? String(event.result.status) : 'settled';
    metrics.jobs.inc({ ...labels, status });
  };
}
