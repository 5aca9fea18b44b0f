import { api } from './api.js';
import { errorText, h, replace } from './dom.js';
import { lineChart } from './line-chart.js';
import { quantile, rates } from './stats-math.js';

/** @typedef {import('./functions-view.js').FunctionDto} FunctionDto */
/** @typedef {import('./stats-math.js').Sample} Sample */

const POLL_MS = 1000;
const WINDOW_MS = 5 * 60_000;
/** Rates and quantiles over the last this long (a p99 of one second's requests says little). */
const RATE_WINDOW_MS = 30_000;

/**
 * A live view of one function version: queue depth, throughput, p50/p99 latency and errors over the last
 * minutes, from `GET /v2/nvcf/stats/functions/{fid}/versions/{vid}` polled every second.
 * @param {HTMLElement} root
 */
export function liveView(root) {
  const title = h('h2', {}, 'Live view');
  const message = h('div');
  const charts = {
    depth: lineChart('chart-queue', 'Queue depth', 'requests', WINDOW_MS),
    throughput: lineChart('chart-throughput', 'Throughput', 'req/s', WINDOW_MS),
    p50: lineChart('chart-p50', 'Latency p50', 's', WINDOW_MS),
    p99: lineChart('chart-p99', 'Latency p99', 's', WINDOW_MS),
    errors: lineChart('chart-errors', 'Errors', 'req/s', WINDOW_MS),
  };
  root.append(
    title,
    h('p', { class: 'hint' }, 'Counters are this gateway’s; the queue depth is the version’s.'),
    message,
    h('div', { class: 'charts' }, ...Object.values(charts).map((c) => c.el)),
  );
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  /** @type {Sample[]} */
  let samples = [];
  /** @type {FunctionDto | undefined} */
  let watched;

  const tick = async () => {
    const f = watched;
    if (!f) return;
    try {
      const s = await api(`/v2/nvcf/stats/functions/${f.id}/versions/${f.versionId}`);
      if (f !== watched) return;
      const now = Date.now();
      samples.push({ t: now, ...s });
      // Keep one read from before the window as the base: however far apart reads are, a change shows.
      while (samples.length > 2 && (samples[1]?.t ?? now) <= now - RATE_WINDOW_MS) samples.shift();
      const first = samples[0] ?? { t: now, ...s };
      const r = rates(first, { t: now, ...s });
      charts.depth.push(now, s.queueDepth);
      charts.throughput.push(now, r.throughput);
      charts.errors.push(now, r.errors);
      charts.p50.push(now, quantile(first, { t: now, ...s }, 0.5));
      charts.p99.push(now, quantile(first, { t: now, ...s }, 0.99));
      replace(message);
    } catch (err) {
      replace(message, errorText(err));
    }
  };

  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    show(/** @type {unknown} */ arg) {
      if (arg && typeof arg === 'object' && 'versionId' in arg) {
        watched = /** @type {FunctionDto} */ (arg);
        samples = [];
        for (const c of Object.values(charts)) c.clear();
      }
      if (!watched) {
        replace(message, h('p', { class: 'hint' }, 'Pick “Live” on a function version in the Functions tab.'));
        return;
      }
      replace(title, `Live view: ${watched.name} `, h('code', {}, watched.versionId));
      stop();
      tick();
      timer = setInterval(tick, POLL_MS);
    },
    hide: stop,
  };
}
