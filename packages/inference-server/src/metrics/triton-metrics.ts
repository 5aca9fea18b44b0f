import { Counter, Gauge, Registry } from 'prom-client';
import type { InferenceCore } from '../core/core-types.ts';
import type { ModelStatistics, ModelStatisticsSnapshot } from '../core/model-statistics.ts';
import { registerHostMetrics } from './host-metrics.ts';

const LABELS = ['model', 'version'] as const;

interface Row {
  stats: ModelStatistics;
  snapshot: ModelStatisticsSnapshot;
  labels: { model: string; version: string };
}

const us = (ns: number) => Math.round(ns / 1000);

/**
 * Triton's inference metrics (Triton metrics), labelled `model` and `version`, read from
 * the core's statistics at scrape time: the statistics are the one source of truth, so the metrics and
 * the statistics endpoints never disagree.
 */
export function createTritonMetrics(core: InferenceCore): Registry {
  const registry = new Registry();
  let rows: Row[] = [];
  // prom-client collects metrics in registration order: the first one takes the snapshot for the scrape.
  new Gauge({
    name: 'nv_inference_pending_request_count',
    help: 'Instantaneous number of pending requests awaiting execution per-model.',
    labelNames: LABELS,
    registers: [registry],
    collect() {
      rows = core.servedVersions().map((stats) => ({
        stats,
        snapshot: stats.snapshot(),
        labels: { model: stats.name, version: stats.version },
      }));
      this.reset();
      for (const r of rows) this.set(r.labels, r.stats.pending);
    },
  });
  const counter = (name: string, help: string, pick: (s: ModelStatisticsSnapshot) => number) =>
    new Counter({
      name,
      help,
      labelNames: LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const r of rows) this.inc(r.labels, pick(r.snapshot));
      },
    });
  const stat = (s: ModelStatisticsSnapshot) => s.inference_stats;

  counter(
    'nv_inference_request_success',
    'Number of successful inference requests, all batch sizes',
    (s) => stat(s).success.count,
  );
  new Counter({
    name: 'nv_inference_request_failure',
    help: 'Number of failed inference requests, all batch sizes',
    labelNames: [...LABELS, 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of rows) {
        for (const [reason, n] of Object.entries(r.stats.failures())) this.inc({ ...r.labels, reason }, n);
      }
    },
  });
  counter('nv_inference_count', 'Number of inferences performed (a batch of n counts n)', (s) => s.inference_count);
  counter('nv_inference_exec_count', 'Number of model executions performed', (s) => s.execution_count);
  counter('nv_inference_request_duration_us', 'Cumulative inference request duration in microseconds', (s) =>
    us(stat(s).success.ns + stat(s).fail.ns),
  );
  counter('nv_inference_queue_duration_us', 'Cumulative inference queuing duration in microseconds', (s) =>
    us(stat(s).queue.ns),
  );
  counter('nv_inference_compute_input_duration_us', 'Cumulative compute input duration in microseconds', (s) =>
    us(stat(s).compute_input.ns),
  );
  counter('nv_inference_compute_infer_duration_us', 'Cumulative compute inference duration in microseconds', (s) =>
    us(stat(s).compute_infer.ns),
  );
  counter(
    'nv_inference_compute_output_duration_us',
    'Cumulative inference compute output duration in microseconds',
    (s) => us(stat(s).compute_output.ns),
  );
  // Triton's CPU and GPU utilisation and memory beside them, as Triton serves them on the same port.
  registerHostMetrics(registry);
  return registry;
}
