import { api } from './api.js';
import { actionRunner, errorText, h, replace } from './dom.js';
// The scopes a key may hold (the API refuses any the caller does not hold itself), served from the gateway's own list.
import { SCOPES } from './scopes.js';

/**
 * API keys: list, create with scopes (the secret is shown once, right here, and never kept), revoke.
 * @param {HTMLElement} root
 */
export function keysView(root) {
  const message = h('div');
  const secret = h('div', { id: 'key-secret' });
  const list = h('div');
  const name = /** @type {HTMLInputElement} */ (h('input', { id: 'key-name', required: true }));
  const boxes = SCOPES.map((s) => /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', value: s })));
  const create = async () => {
    const scopes = boxes.filter((b) => b.checked).map((b) => b.value);
    /** @type {{ key: { id: string }, value: string }} */
    const made = await api('/v2/nvcf/keys', { method: 'POST', body: { name: name.value, scopes } });
    replace(
      secret,
      h('p', { class: 'secret' }, 'The new key (shown this once; copy it now): ', h('code', {}, made.value)),
    );
  };
  const run = actionRunner(message, () => refresh());
  /** A new action hides the key a previous one showed. */
  const act = (/** @type {() => Promise<unknown>} */ action) => {
    replace(secret);
    return run(action);
  };
  root.append(
    h('h2', {}, 'API keys'),
    h(
      'form',
      {
        class: 'inline',
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          act(create);
        },
      },
      h('label', {}, 'Name', name),
      ...boxes.map((b) => h('label', { class: 'scope' }, b.value, b)),
      h('button', { type: 'submit' }, 'Create key'),
    ),
    secret,
    message,
    list,
  );

  async function refresh() {
    try {
      /** @type {{ keys: { id: string, name: string, scopes: string[], functionIds?: string[], createdAt: string, revokedAt?: string }[] }} */
      const { keys } = await api('/v2/nvcf/keys');
      replace(
        list,
        h(
          'table',
          { id: 'keys-table' },
          h('tr', {}, ...['Name', 'Id', 'Scopes', 'Functions', 'Created', 'Revoked', ''].map((t) => h('th', {}, t))),
          ...keys.map((k) =>
            h(
              'tr',
              { 'data-key': k.name },
              h('td', {}, k.name),
              h('td', {}, h('code', {}, k.id)),
              h('td', {}, k.scopes.join(' ')),
              h('td', {}, k.functionIds?.join(' ') ?? 'all'),
              h('td', {}, k.createdAt),
              h('td', {}, k.revokedAt ?? ''),
              h(
                'td',
                {},
                !k.revokedAt &&
                  h(
                    'button',
                    { type: 'button', onclick: () => act(() => api(`/v2/nvcf/keys/${k.id}`, { method: 'DELETE' })) },
                    'Revoke',
                  ),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(list, errorText(err));
    }
  }
  return { show: refresh };
}
