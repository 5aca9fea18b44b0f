import type { FunctionRegistry } from '@nvcf/control-store';
import type { QueueCounts, QueueStats } from '@nvcf/queue';
import { Gauge, type Registry } from 'prom-client';
import { VERSION_LABELS } from './gateway-metrics.ts';

interface VersionRow {
  labels: { function_id: string; function_version_id: string };
  counts: QueueCounts;
  workers: number;
}

export interface QueueMetricsOptions {
  /** A scrape within this long of the last read answers from it: Redis is read at most once per period. */
  cacheMs: number;
  /** A read that failed (the scrape goes on without the queue series). */
  onError: (err: unknown) => void;
}

/**
 * Queue depth (waiting, active, delayed), the oldest waiting job's age and live workers per deployed function
 * version: what an autoscaler scales on. Read at scrape time, never scanned: the deployed versions (one read
 * of the function index plus one per function), then per version its queue counts and live workers. A
 * scrape within `cacheMs` of the last read, or during one, shares it, so many scrapers (Prometheus HA pairs,
 * several dashboards) cost Redis no more.
 */
export function registerQueueMetrics(
  registry: Registry,
  deps: { functions: FunctionRegistry; stats: QueueStats },
  opts: QueueMetricsOptions,
): void {
  let rows: VersionRow[] = [];
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  const refresh = async () => {
    if (Date.now() - readAt < opts.cacheMs) return;
    // Redis unreachable: the series vanish (an autoscaler must not act on old depths) and the gateway's
    // other metrics are still served; the next scrape tries again.
    reading ??= read()
      .catch((err: unknown) => {
        rows = [];
        opts.onError(err);
      })
      .finally(() => {
        reading = undefined;
      });
    await reading;
  };

  async function read(): Promise<void> {
    const versions = await deps.functions.list();
    const ids = versions.map((v) => v.versionId);
    const [counts, live] = await Promise.all([
      Promise.all(ids.map((id) => deps.stats.counts(id))),
      deps.functions.liveWorkers(ids),
    ]);
    rows = versions.flatMap((v, i) => {
      const c = counts[i];
      return c
        ? [
            {
              labels: { function_id: v.id, function_version_id: v.versionId },
              counts: c,
              workers: live[i]?.length ?? 0,
            },
          ]
        : [];
    });
    readAt = Date.now();
  }

  const registers = [registry];
  // prom-client starts every collect at once: each awaits the same read (or its cached rows).
  new Gauge({
    name: 'nvcf_queue_jobs',
    help: 'Jobs in a function version’s queue by state: waiting (for a worker), active (taken by one), delayed (a retry pausing).',
    labelNames: [...VERSION_LABELS, 'state'] as const,
    registers,
    async collect() {
      await refresh();
      this.reset();
      for (const r of rows) {
        this.set({ ...r.labels, state: 'waiting' }, r.counts.waiting);
        this.set({ ...r.labels, state: 'active' }, r.counts.active);
        this.set({ ...r.labels, state: 'delayed' }, r.counts.delayed);
      }
    },
  });
  new Gauge({
    name: 'nvcf_queue_oldest_waiting_job_age_seconds',
    help: 'How long the oldest job no worker has taken yet has been waiting (0 when none waits): the time in queue.',
    labelNames: VERSION_LABELS,
    registers,
    async collect() {
      await refresh();
      this.reset();
      for (const r of rows) this.set(r.labels, r.counts.oldestWaitingSeconds);
    },
  });
  new Gauge({
    name: 'nvcf_function_version_live_workers',
    help: 'Workers serving a function version now (their heartbeat is current).',
    labelNames: VERSION_LABELS,
    registers,
    async collect() {
      await refresh();
      this.reset();
      for (const r of rows) this.set(r.labels, r.workers);
    },
  });
}
