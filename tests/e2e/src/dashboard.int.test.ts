import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningGateway } from '@nvcf/gateway';
import { loadGatewayConfig } from '@nvcf/gateway';
import { loadWorkerConfig, type RunningWorker } from '@nvcf/worker';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RenderedPanel, renderDashboard } from './dashboard-render.ts';
import { createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';
import { familyNames, scrape } from './prometheus-scrape.ts';
import { startPrometheus } from './prometheus-server.ts';

const deploy = resolve(import.meta.dirname, '../../../deploy');
const dashboardsDir = join(deploy, 'grafana/dashboards');

/** What the test reads of a Grafana dashboard (https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/). */
const Target = z.object({ refId: z.string(), expr: z.string().min(1), legendFormat: z.string().optional() });
const Panel = z.object({
  id: z.number(),
  type: z.string(),
  title: z.string().min(1),
  gridPos: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }),
  fieldConfig: z.object({ defaults: z.object({ unit: z.string().optional() }) }).optional(),
  targets: z.array(Target).optional(),
  datasource: z.object({ type: z.literal('prometheus'), uid: z.literal('prometheus') }).optional(),
});
const Dashboard = z.object({ uid: z.string().min(1), title: z.string().min(1), panels: z.array(Panel).min(1) });

/**
 * Metrics of other exporters the dashboards may name: redis_exporter's (https://github.com/oliver006/redis_exporter,
 * "What's exported": INFO fields as redis_<field>, e.g. used_memory → redis_memory_used_bytes) and Prometheus'
 * own `up` (https://prometheus.io/docs/concepts/jobs_instances/).
 */
const EXTERNAL = new Set([
  'redis_memory_used_bytes',
  'redis_memory_max_bytes',
  'redis_connected_clients',
  'redis_commands_processed_total',
  'up',
]);

/** PromQL words that are not metric names (https://prometheus.io/docs/prometheus/latest/querying/operators/). */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);

/** The metric names a PromQL expression selects: identifiers that are not functions, keywords, labels or strings. */
function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values, legend strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\[[^\]]*\]/g, ''); // range selectors ([5m], [$__rate_interval])
  const names = [...bare.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)].flatMap((m) =>
    m[1] ? [m[1]] : [],
  );
  return names.filter((n) => !KEYWORDS.has(n) && !/^(Inf|NaN)$/i.test(n));
}

/** A histogram's series are its family's name plus `_bucket`, `_sum` and `_count`. */
function withSeries(families: string[]): Set<string> {
  return new Set(families.flatMap((f) => [f, `${f}_bucket`, `${f}_sum`, `${f}_count`]));
}

let h: Harness;
let exported: Set<string>;
let gw: RunningGateway;
let worker: RunningWorker;

beforeAll(async () => {
  h = await createHarness();
  // The load below runs for a time, not a count: on a fast machine it passed the default 6000 calls per minute
  // and drew 429s. The rate limit is not what these panels show.
  gw = await h.gateway({ RATE_LIMIT_PER_MINUTE: '0' });
  worker = await h.worker();
  const [fromGateway, fromWorker] = await Promise.all([
    scrape(`http://127.0.0.1:${gw.metricsPort}/metrics`),
    scrape(`http://127.0.0.1:${worker.ports.metrics}/metrics`),
  ]);
  exported = withSeries([...familyNames(fromGateway.text), ...familyNames(fromWorker.text)]);
});
afterAll(async () => {
  await h?.close();
});

/** Debian's chromium (`bash scripts/nvcf.sh test` installs it as root), or CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots, kept as test artifacts (git-ignored); docs/images/dashboard.png is one of them. */
const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', 'test-results', 'dashboard');
/** Grafana's `$__rate_interval` for a 1 s scrape: four scrape intervals, as Grafana computes it. */
const RATE_INTERVAL = '4s';

async function dashboards(): Promise<{ file: string; dashboard: z.infer<typeof Dashboard> }[]> {
  const files = (await readdir(dashboardsDir)).filter((f) => f.endsWith('.json'));
  return Promise.all(
    files.map(async (file) => ({
      file,
      dashboard: Dashboard.parse(JSON.parse(await readFile(join(dashboardsDir, file), 'utf8'))),
    })),
  );
}

describe('Grafana dashboards in deploy/grafana/dashboards', () => {
  it('reads PromQL names apart from functions, labels and ranges', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.95, sum by (le) (rate(nvcf_gateway_invocation_duration_seconds_bucket{job="gateway"}[$__rate_interval])))',
      ),
    ).toEqual(['nvcf_gateway_invocation_duration_seconds_bucket']);
    expect(metricNamesOf('max by (instance) (nv_cpu_utilization) / on (instance) up')).toEqual([
      'nv_cpu_utilization',
      'up',
    ]);
  });

  it('parse, and every panel query names only metrics a real gateway, a real worker or redis_exporter exports', async () => {
    const all = await dashboards();
    expect(all.map((d) => d.file)).toContain('nvcf-overview.json');
    let queries = 0;
    for (const { file, dashboard } of all) {
      expect(new Set(dashboard.panels.map((p) => p.id)).size, `${file}: panel ids are unique`).toBe(
        dashboard.panels.length,
      );
      for (const panel of dashboard.panels) {
        if (panel.type === 'row') continue;
        expect(panel.targets?.length ?? 0, `${file}: "${panel.title}" has a query`).toBeGreaterThan(0);
        for (const target of panel.targets ?? []) {
          const names = metricNamesOf(target.expr);
          expect(names.length, `${file}: "${panel.title}" ${target.expr}`).toBeGreaterThan(0);
          for (const name of names) {
            expect(exported.has(name) || EXTERNAL.has(name), `${file}: "${panel.title}" names ${name}`).toBe(true);
          }
          queries++;
        }
      }
    }
    expect(queries).toBeGreaterThanOrEqual(10);
  });

  it('Prometheus scrapes the ports the gateway and the worker serve their metrics on by default', async () => {
    const config = await readFile(join(deploy, 'prometheus/prometheus.yml'), 'utf8');
    expect(config).toContain(`port: ${loadGatewayConfig({}).metricsPort}`);
    expect(config).toContain(`port: ${loadWorkerConfig({}).metricsPort}`);
    const datasource = await readFile(join(deploy, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8');
    expect(datasource).toMatch(/^\s+uid: prometheus$/m);
  });

  it('every panel query runs on a real Prometheus scraping a gateway and a worker under load, and draws', async () => {
    const prometheus = await startPrometheus({
      gateway: [`127.0.0.1:${gw.metricsPort}`],
      worker: [`127.0.0.1:${worker.ports.metrics}`],
    });
    try {
      await prometheus.targetsUp();
      const start = Math.floor(Date.now() / 1000);
      // Load for a few scrapes: invocations (some waiting a little in the queue), answers, queue depth moving.
      const until = Date.now() + 6000;
      while (Date.now() < until) {
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest())),
        );
        for (const a of answers) {
          expect(a.status).toBe(200);
          await a.arrayBuffer();
        }
      }
      await sleep(2500); // two more scrapes after the last answer
      const end = Math.ceil(Date.now() / 1000);
      // What the processes have samples of now: a query naming only those must find series.
      const sampled = new Set(
        (
          await Promise.all([
            scrape(`http://127.0.0.1:${gw.metricsPort}/metrics`),
            scrape(`http://127.0.0.1:${worker.ports.metrics}/metrics`),
          ])
        ).flatMap((r) => r.samples.map((x) => x.name)),
      );

      for (const { file, dashboard } of await dashboards()) {
        const panels: RenderedPanel[] = [];
        let drawn = 0;
        for (const panel of dashboard.panels) {
          const targets = [];
          for (const target of panel.targets ?? []) {
            const expr = target.expr.replaceAll('$__rate_interval', RATE_INTERVAL);
            // A query Prometheus cannot parse or evaluate rejects here, naming itself.
            const series = await prometheus.queryRange(expr, { start, end, stepSeconds: 1 }).catch((err: unknown) => {
              throw new Error(`${file}: "${panel.title}" ${expr}: ${(err as Error).message}`);
            });
            if (metricNamesOf(expr).every((n) => sampled.has(n))) {
              expect(series.length, `${file}: "${panel.title}" ${expr} has series`).toBeGreaterThan(0);
            }
            targets.push({ ...(target.legendFormat ? { legendFormat: target.legendFormat } : {}), series });
          }
          if (targets.some((t) => t.series.length > 0)) drawn++;
          const unit = panel.fieldConfig?.defaults.unit;
          panels.push({
            type: panel.type,
            title: panel.title,
            gridPos: panel.gridPos,
            ...(unit ? { unit } : {}),
            targets,
          });
        }
        // Everything but GPU and Redis panels (no GPU, no redis_exporter here) has data.
        expect(drawn, `${file}: panels with data`).toBeGreaterThanOrEqual(10);

        const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
        try {
          const page = await browser.newPage({ viewport: { width: 1640, height: 900 } });
          await page.setContent(renderDashboard(dashboard.title, panels, { start, end }));
          expect(await page.locator('section').count()).toBe(panels.filter((p) => p.type !== 'row').length);
          await mkdir(ARTIFACTS, { recursive: true });
          await page.screenshot({ path: join(ARTIFACTS, file.replace(/\.json$/, '.png')), fullPage: true });
          await writeFile(join(ARTIFACTS, file.replace(/\.json$/, '.html')), await page.content());
        } finally {
          await browser.close();
        }
      }
    } finally {
      await prometheus.close();
    }
  });
});
