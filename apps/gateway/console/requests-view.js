import { call } from './api.js';
import { errorText, h, replace } from './dom.js';
import { requestLog } from './request-log.js';

const SHOWN = ['nvcf-status', 'nvcf-percent-complete', 'nvcf-reqid'];
const ms = (/** @type {number | undefined} */ t, /** @type {number} */ from) => (t ? `${t - from} ms` : '—');

/**
 * Request lookup by id: its status and percent (a 1-second status poll), its position while queued, and the
 * timings the playground recorded for it.
 * @param {HTMLElement} root
 */
export function requestsView(root) {
  const id = /** @type {HTMLInputElement} */ (h('input', { id: 'request-id', size: 40, required: true }));
  const out = h('div', { id: 'request-result' });
  const lookup = async () => {
    const reqId = id.value.trim();
    try {
      const position = await call(`/v2/nvcf/queues/${reqId}/position`);
      const queued = position.ok ? (await position.json()).positionInQueue : undefined;
      const res = await call(`/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '1' } });
      const text = await res.text();
      const seen = requestLog.get(reqId);
      replace(
        out,
        h(
          'table',
          {},
          h('tr', {}, h('th', {}, 'HTTP status'), h('td', { 'data-status': String(res.status) }, String(res.status))),
          ...SHOWN.filter((n) => res.headers.has(n)).map((n) =>
            h('tr', {}, h('th', {}, n), h('td', {}, res.headers.get(n) ?? '')),
          ),
          h(
            'tr',
            {},
            h('th', {}, 'Position in queue'),
            h('td', {}, queued === undefined ? 'not queued' : String(queued)),
          ),
          seen &&
            h(
              'tr',
              {},
              h('th', {}, 'Timings (this tab)'),
              h(
                'td',
                {},
                `${seen.functionName}: sent ${new Date(seen.sentAt).toISOString()}, id back after `,
                ms(seen.acceptedAt, seen.sentAt),
                ', answer after ',
                ms(seen.answeredAt, seen.sentAt),
              ),
            ),
        ),
        res.status === 200 ? h('p', { class: 'hint' }, 'The answer is handed out once: this lookup delivered it.') : '',
        text ? h('pre', {}, text) : '',
      );
    } catch (err) {
      replace(out, errorText(err));
    }
  };
  root.append(
    h('h2', {}, 'Request lookup'),
    h(
      'form',
      {
        class: 'inline',
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          lookup();
        },
      },
      h('label', {}, 'Request id', id),
      h('button', { type: 'submit' }, 'Look up'),
    ),
    out,
  );
  return {
    show() {
      const recent = [...requestLog.keys()].at(-1);
      if (recent && !id.value) id.value = recent;
    },
  };
}
