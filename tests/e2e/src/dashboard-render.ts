/**
 * Test helper: draws a Grafana dashboard's panels as one self-contained HTML page (inline SVG, no script, nothing
 * fetched), from range-query results that Prometheus answered for each panel's queries. It lays the panels out by
 * their `gridPos` on Grafana's 24-column grid (https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/
 * view-dashboard-json-model/#panels), so a screenshot shows the dashboard's shape with live data where Grafana itself
 * cannot run (no Grafana package on Debian, no container engine in CI).
 */
import type { RangeSeries } from './prometheus-server.ts';

export interface RenderedTarget {
  legendFormat?: string;
  series: RangeSeries[];
}
export interface RenderedPanel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  unit?: string;
  targets: RenderedTarget[];
}

const WIDTH = 1600;
const ROW_PX = 34;
const COLORS = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#ff9830'];

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** `{{label}}` in a legend format, as Grafana fills it from the series' labels. */
const legendOf = (format: string | undefined, metric: Record<string, string>) =>
  format
    ? format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => metric[name] ?? '')
    : JSON.stringify(metric) || '{}';

function formatValue(value: number, unit: string | undefined): string {
  const n = Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(2);
  if (unit === 's') return `${n} s`;
  if (unit === 'bytes') return `${(value / 1024 / 1024).toFixed(1)} MiB`;
  if (unit === 'percentunit') return `${(value * 100).toFixed(0)} %`;
  if (unit === 'reqps') return `${n} req/s`;
  return n;
}

function chart(panel: RenderedPanel, w: number, h: number, range: { start: number; end: number }): string {
  const lines = panel.targets.flatMap((t) =>
    t.series.map((s) => ({
      name: legendOf(t.legendFormat, s.metric),
      points: s.values.map(([at, v]) => [at, Number(v)] as const).filter(([, v]) => Number.isFinite(v)),
    })),
  );
  const max = Math.max(0, ...lines.flatMap((l) => l.points.map(([, v]) => v)));
  const top = max > 0 ? max * 1.1 : 1;
  const x = (at: number) => ((at - range.start) / Math.max(1, range.end - range.start)) * w;
  const y = (v: number) => h - (v / top) * h;
  const paths = lines.map((l, i) => {
    const d = l.points.map(([at, v], j) => `${j === 0 ? 'M' : 'L'}${x(at).toFixed(1)},${y(v).toFixed(1)}`).join('');
    return `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"/>`;
  });
  const legend = lines
    .slice(0, 6)
    .map((l, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${escapeHtml(l.name)}</span>`)
    .join('');
  const empty = lines.length === 0 ? '<text x="50%" y="50%" text-anchor="middle" class="none">No data</text>' : '';
  return (
    `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<line x1="0" y1="${h}" x2="${w}" y2="${h}" class="axis"/><line x1="0" y1="0" x2="${w}" y2="0" class="grid"/>` +
    `<text x="4" y="12" class="tick">${escapeHtml(formatValue(top, panel.unit))}</text>${paths.join('')}${empty}</svg>` +
    `<div class="legend">${legend}</div>`
  );
}

/** The page: every panel at its grid position, rows as headers, each timeseries drawn from its queries' series. */
export function renderDashboard(title: string, panels: RenderedPanel[], range: { start: number; end: number }): string {
  const cell = WIDTH / 24;
  const body = panels
    .map((p) => {
      const style = `left:${p.gridPos.x * cell}px;top:${p.gridPos.y * ROW_PX}px;width:${p.gridPos.w * cell - 8}px;height:${p.gridPos.h * ROW_PX - 8}px`;
      if (p.type === 'row') return `<h2 style="${style}">${escapeHtml(p.title)}</h2>`;
      const inner = chart(p, p.gridPos.w * cell - 32, p.gridPos.h * ROW_PX - 82, range);
      return `<section style="${style}"><h3>${escapeHtml(p.title)}</h3>${inner}</section>`;
    })
    .join('\n');
  const height = Math.max(...panels.map((p) => (p.gridPos.y + p.gridPos.h) * ROW_PX)) + 60;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
body{margin:0;background:#111217;color:#ccccdc;font:13px system-ui,sans-serif}
header{padding:12px 16px;font-size:18px;border-bottom:1px solid #2c3235}
main{position:relative;margin:12px 16px;width:${WIDTH}px;height:${height}px}
section,h2{position:absolute;box-sizing:border-box;margin:0}
section{background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:8px 12px}
h2{font-size:15px;padding-top:8px;border-bottom:1px solid #2c3235}
h3{margin:0 0 6px;font-size:13px;font-weight:500}
.axis{stroke:#444}.grid{stroke:#2c3235}.tick{fill:#8e8e8e;font-size:10px}.none{fill:#8e8e8e}
.legend{display:flex;flex-wrap:wrap;gap:4px 12px;margin-top:4px;font-size:11px;overflow:hidden;height:30px}
.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
</style></head><body><header>${escapeHtml(title)}</header><main>
${body}
</main></body></html>`;
}
