import { api } from './api.js';
import { actionRunner, errorText, h, replace } from './dom.js';
import { uploadAsset } from './upload.js';

/**
 * The credential's assets: list, upload, delete.
 * @param {HTMLElement} root
 */
export function assetsView(root) {
  const message = h('div');
  const list = h('div');
  const file = /** @type {HTMLInputElement} */ (h('input', { type: 'file', id: 'asset-file' }));
  const act = actionRunner(message, () => refresh());
  const upload = async () => {
    const chosen = file.files?.[0];
    if (!chosen) throw new Error('Pick a file');
    await uploadAsset(chosen);
  };
  root.append(
    h('h2', {}, 'Assets'),
    h(
      'form',
      {
        class: 'inline',
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          act(upload);
        },
      },
      h('label', {}, 'File', file),
      h('button', { type: 'submit' }, 'Upload'),
    ),
    message,
    list,
  );

  async function refresh() {
    try {
      /** @type {{ assets: { assetId: string, description: string, contentType: string }[] }} */
      const { assets } = await api('/v2/nvcf/assets');
      replace(
        list,
        h(
          'table',
          { id: 'assets-table' },
          h('tr', {}, ...['Asset id', 'Description', 'Content type', ''].map((t) => h('th', {}, t))),
          ...assets.map((a) =>
            h(
              'tr',
              {},
              h('td', {}, h('code', {}, a.assetId)),
              h('td', {}, a.description),
              h('td', {}, a.contentType),
              h(
                'td',
                {},
                h(
                  'button',
                  {
                    type: 'button',
                    onclick: () => act(() => api(`/v2/nvcf/assets/${a.assetId}`, { method: 'DELETE' })),
                  },
                  'Delete',
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
