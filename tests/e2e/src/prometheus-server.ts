/**
 * Test helper (only *.int.test.ts import it): a real Prometheus server (Debian's `prometheus`; `bash scripts/nvcf.sh
 * test` installs it as root; PROMETHEUS_PATH overrides) scraping the given targets every second, and its HTTP query
 * API (https://prometheus.io/docs/prometheus/latest/querying/api/).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@nvcf/testing';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';

/** One series of a range query: its labels and `[unix seconds, value]` points. */
export interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface PrometheusServer {
  url: string;
  /** Resolves once every target has been scraped up (`up == 1`). */
  targetsUp(): Promise<void>;
  /** A range query; rejects with Prometheus' error (a query that does not parse, say). */
  queryRange(expr: string, opts: { start: number; end: number; stepSeconds: number }): Promise<RangeSeries[]>;
  close(): Promise<void>;
}

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data?: T;
  error?: string;
}

/** Starts Prometheus scraping `targets` (job name → `host:port` list) every second, storing in a temporary directory. */
export async function startPrometheus(targets: Record<string, string[]>): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-prometheus-'));
  const port = await freePort();
  const jobs = Object.entries(targets)
    .map(([job, list]) => `  - job_name: ${job}\n    static_configs:\n      - targets: ${JSON.stringify(list)}\n`)
    .join('');
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n${jobs}`,
  );
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;

  const api = async <T>(path: string, params: Record<string, string>): Promise<T> => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    const body = (await res.json()) as ApiAnswer<T>;
    if (body.status !== 'success' || body.data === undefined) throw new Error(`${path}: ${body.error ?? res.status}`);
    return body.data;
  };

  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };

  // Ready once it answers /-/ready; a start that fails (no binary, a bad flag) says why.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 600) {
      await close();
      throw new Error(`prometheus did not become ready: ${stderr}`);
    }
    await sleep(100);
  }

  return {
    url,
    async targetsUp() {
      const expected = Object.values(targets).flat().length;
      for (;;) {
        const up = await api<{ result: { value: [number, string] }[] }>('/api/v1/query', { query: 'up == 1' });
        if (up.result.length >= expected) return;
        await sleep(250);
      }
    },
    async queryRange(expr, { start, end, stepSeconds }) {
      const data = await api<{ result: RangeSeries[] }>('/api/v1/query_range', {
        query: expr,
        start: String(start),
        end: String(end),
        step: String(stepSeconds),
      });
      return data.result;
    },
    close,
  };
}
