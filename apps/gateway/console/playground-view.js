import { api, call } from './api.js';
import { errorText, h, pretty, replace, signature } from './dom.js';
import { kserveRequest } from './kserve-request.js';
import { requestLog } from './request-log.js';
import { readEvents } from './sse-reader.js';

/** @typedef {import('./functions-view.js').FunctionDto} FunctionDto */

const SHOWN_HEADERS = ['nvcf-reqid', 'nvcf-status', 'nvcf-percent-complete', 'location', 'content-type'];

/**
 * The invoke playground: a KServe V2 request prefilled from the model's signature, sent with pexec; shows the
 * HTTP status, NVCF headers and body (following 202s with status polls), or the events of a stream as they come.
 * @param {HTMLElement} root
 */
export function playgroundView(root) {
  const picker = /** @type {HTMLSelectElement} */ (h('select', { id: 'playground-function' }));
  const about = h('p', { class: 'hint' });
  const body = /** @type {HTMLTextAreaElement} */ (h('textarea', { id: 'playground-body', spellcheck: 'false' }));
  const stream = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'playground-stream' }));
  const poll = /** @type {HTMLInputElement} */ (h('input', { type: 'number', min: '1', max: '3600', value: '5' }));
  const status = h('p', { id: 'playground-status' });
  const headers = h('table', { id: 'playground-headers' });
  const output = h('pre', { id: 'playground-response' });
  const events = h('ol', { id: 'playground-events' });
  /** @type {FunctionDto[]} */
  let functions = [];
  /** @type {AbortController | undefined} */
  let inFlight;

  const selected = () => functions.find((f) => f.versionId === picker.value);
  const prefill = () => {
    const f = selected();
    if (!f) return;
    replace(about, f.model ? `${signature(f.model.inputs)} → ${signature(f.model.outputs)}` : 'No model signature');
    body.value = pretty(kserveRequest(f.model?.inputs ?? []));
    stream.checked = f.functionType === 'STREAMING' || f.functionType === 'LLM';
  };
  picker.addEventListener('change', prefill);

  const showHead = (/** @type {Response} */ res) => {
    replace(status, `HTTP ${res.status} ${res.statusText}`);
    replace(
      headers,
      ...SHOWN_HEADERS.filter((n) => res.headers.has(n)).map((n) =>
        h('tr', {}, h('th', {}, n), h('td', {}, res.headers.get(n) ?? '')),
      ),
    );
  };
  const showResponse = async (/** @type {Response} */ res) => {
    showHead(res);
    const text = await res.text();
    try {
      replace(output, pretty(JSON.parse(text)));
    } catch {
      replace(output, text);
    }
    // Set last: whoever waits for the status (a test, a script) finds the body already shown.
    status.setAttribute('data-status', String(res.status));
  };

  const send = async () => {
    const f = selected();
    if (!f) return;
    inFlight?.abort();
    const abort = new AbortController();
    inFlight = abort;
    replace(status, 'Sending…');
    status.removeAttribute('data-status');
    status.removeAttribute('data-stream');
    replace(headers);
    replace(output);
    replace(events);
    const init = {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        'nvcf-poll-seconds': poll.value,
        ...(stream.checked ? { accept: 'text/event-stream' } : {}),
      },
      body: body.value,
    };
    const sentAt = Date.now();
    /** @param {Response} r */
    const record = (r) => {
      const reqId = r.headers.get('nvcf-reqid');
      if (!reqId) return;
      const entry = requestLog.get(reqId) ?? { functionName: f.name, sentAt, acceptedAt: Date.now() };
      if (r.status !== 202) Object.assign(entry, { answeredAt: Date.now(), status: r.status });
      requestLog.set(reqId, entry);
    };
    try {
      let res = await call(`/v2/nvcf/pexec/functions/${f.id}/versions/${f.versionId}`, init);
      record(res);
      if (stream.checked && res.ok && res.headers.get('content-type')?.startsWith('text/event-stream') && res.body) {
        showHead(res);
        status.setAttribute('data-status', String(res.status));
        status.setAttribute('data-stream', 'open');
        await readEvents(res.body, (e) =>
          events.append(h('li', { class: e.event === 'error' ? 'error' : '' }, e.data)),
        );
        status.setAttribute('data-stream', 'ended');
        return;
      }
      // Still running: show where it is, then ask again until the answer (or an error) comes.
      while (res.status === 202) {
        const reqId = res.headers.get('nvcf-reqid') ?? '';
        await showResponse(res);
        replace(status, `HTTP 202 ${res.headers.get('nvcf-status') ?? ''}, polling ${reqId}…`);
        res = await call(`/v2/nvcf/pexec/status/${reqId}`, {
          signal: abort.signal,
          headers: { 'nvcf-poll-seconds': poll.value },
        });
        record(res);
      }
      await showResponse(res);
    } catch (err) {
      if (!abort.signal.aborted) replace(status, errorText(err));
    }
  };

  root.append(
    h('h2', {}, 'Invoke playground'),
    h(
      'form',
      {
        class: 'inline',
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          send();
        },
      },
      h('label', {}, 'Function version', picker),
      h('label', {}, 'NVCF-POLL-SECONDS', poll),
      h('label', {}, 'Stream (SSE)', stream),
      h('button', { type: 'submit', id: 'playground-send' }, 'Send'),
    ),
    about,
    h('label', { class: 'block' }, 'KServe V2 request', body),
    h('h3', {}, 'Response'),
    status,
    headers,
    output,
    events,
  );

  return {
    async show(/** @type {unknown} */ arg) {
      try {
        functions = (await api('/v2/nvcf/functions')).functions;
      } catch (err) {
        replace(about, errorText(err));
        return;
      }
      const keep = arg && typeof arg === 'object' && 'versionId' in arg ? String(arg.versionId) : picker.value;
      replace(
        picker,
        ...functions.map((f) =>
          h('option', { value: f.versionId }, `${f.name} (${f.versionId.slice(0, 8)}, ${f.status})`),
        ),
      );
      if (keep && functions.some((f) => f.versionId === keep)) picker.value = keep;
      if (arg || !body.value) prefill();
    },
  };
}
