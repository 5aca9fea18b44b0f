import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 400;
const H = 140;
const PAD = 24;

/**
 * A line chart of the last `windowMs` of samples, drawn as SVG (no chart library: nothing to fetch).
 * @param {string} id @param {string} title @param {string} unit @param {number} windowMs
 */
export function lineChart(id, title, unit, windowMs) {
  /** @type {{ t: number, v: number }[]} */
  const points = [];
  const value = h('span', { class: 'value', 'data-value': '' });
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  const axis = document.createElementNS(SVG, 'path');
  axis.setAttribute('d', `M${PAD} ${PAD / 2} V${H - PAD} H${W}`);
  axis.setAttribute('stroke', '#aaa');
  axis.setAttribute('fill', 'none');
  const line = document.createElementNS(SVG, 'polyline');
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke', '#76b900');
  line.setAttribute('stroke-width', '2');
  const top = document.createElementNS(SVG, 'text');
  top.setAttribute('x', '2');
  top.setAttribute('y', '12');
  top.setAttribute('font-size', '10');
  svg.append(axis, line, top);
  const el = h('div', { class: 'chart', id }, h('h3', {}, `${title} `, value), svg);

  return {
    el,
    /** @param {number} t @param {number} v */
    push(t, v) {
      points.push({ t, v });
      while (points.length > 0 && (points[0]?.t ?? t) < t - windowMs) points.shift();
      const max = Math.max(1e-9, ...points.map((p) => p.v));
      const x = (/** @type {number} */ pt) => PAD + ((pt - (t - windowMs)) / windowMs) * (W - PAD);
      const y = (/** @type {number} */ pv) => H - PAD - (pv / max) * (H - PAD * 1.5);
      line.setAttribute('points', points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '));
      top.textContent = `${format(max)} ${unit}`;
      value.textContent = `${format(v)} ${unit}`;
      value.setAttribute('data-value', String(v));
      el.setAttribute('data-points', String(points.length));
      el.setAttribute('data-max', String(Math.max(...points.map((p) => p.v))));
    },
    clear() {
      points.length = 0;
    },
  };
}

const format = (/** @type {number} */ v) => (Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 0));
