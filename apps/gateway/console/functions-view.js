import { api } from './api.js';
import { actionRunner, errorText, h, replace, signature } from './dom.js';
import { uploadAsset } from './upload.js';

/**
 * @typedef {{ name: string, datatype: string, shape: number[] }} TensorSpec
 * @typedef {{ id: string, versionId: string, name: string, status: string, description?: string, tags?: string[],
 *   functionType?: string, models: { name: string, version: string, uri: string }[],
 *   model?: { name: string, inputs: TensorSpec[], outputs: TensorSpec[] }, activeInstances?: unknown[] }} FunctionDto
 */

const FN = '/v2/nvcf/functions';
const deployPath = (/** @type {FunctionDto} */ f) => `/v2/nvcf/deployments/functions/${f.id}/versions/${f.versionId}`;

/** Models of the repository, as the functions made from them name them (`model-repository://<name>/<version>`). */
function repositoryModels(/** @type {FunctionDto[]} */ fns) {
  const uris = fns.flatMap((f) => f.models.map((m) => m.uri)).filter((u) => u.startsWith('model-repository://'));
  return [...new Set(uris)].sort();
}

/**
 * Functions and their versions: status, model signature, live instances; create (a repository model or an
 * uploaded `.onnx` / zipped model directory), deploy, edit, undeploy, delete.
 * @param {HTMLElement} root @param {(tab: string, arg?: unknown) => void} open
 */
export function functionsView(root, open) {
  const message = h('div');
  const table = h('div', { id: 'functions-list' });
  const createForm = h('div');
  const deployment = {
    min: /** @type {HTMLInputElement} */ (h('input', { type: 'number', min: '0', value: '0', id: 'deploy-min' })),
    max: /** @type {HTMLInputElement} */ (h('input', { type: 'number', min: '1', value: '1', id: 'deploy-max' })),
    concurrency: /** @type {HTMLInputElement} */ (h('input', { type: 'number', min: '1', value: '4' })),
  };
  root.append(
    h('h2', {}, 'Functions'),
    createForm,
    h(
      'form',
      { class: 'inline' },
      h('span', { class: 'hint' }, 'Deploy with'),
      h('label', {}, 'minInstances', deployment.min),
      h('label', {}, 'maxInstances', deployment.max),
      h('label', {}, 'maxRequestConcurrency', deployment.concurrency),
      h('span', { class: 'hint' }, 'minInstances 0: invocable at once, requests wait until a worker comes.'),
    ),
    h('button', { type: 'button', id: 'functions-refresh', onclick: () => refresh() }, 'Refresh'),
    message,
    table,
  );

  /** Runs an action, shows its failure, and redraws the list. */
  const act = actionRunner(message, () => refresh());

  const row = (/** @type {FunctionDto} */ f) => {
    const live = f.activeInstances?.length ?? 0;
    const description = /** @type {HTMLInputElement} */ (h('input', { value: f.description ?? '', size: 16 }));
    return h(
      'tr',
      { 'data-function': f.name, 'data-version': f.versionId },
      h('td', {}, h('strong', {}, f.name), h('br'), h('code', {}, f.id)),
      h('td', {}, h('code', {}, f.versionId)),
      h('td', { class: `status status-${f.status}` }, f.status),
      h(
        'td',
        {},
        f.model ? `${signature(f.model.inputs)} → ${signature(f.model.outputs)}` : (f.models[0]?.uri ?? 'container'),
      ),
      h('td', { class: 'instances' }, String(live)),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => act(() => deploy(f)) }, 'Deploy'),
        ' ',
        h('button', { type: 'button', onclick: () => act(() => api(deployPath(f), { method: 'DELETE' })) }, 'Undeploy'),
        ' ',
        h('button', { type: 'button', onclick: () => open('playground', f) }, 'Invoke'),
        ' ',
        h('button', { type: 'button', onclick: () => open('live', f) }, 'Live'),
        ' ',
        h(
          'button',
          {
            type: 'button',
            onclick: () => act(() => api(`${FN}/${f.id}/versions/${f.versionId}`, { method: 'DELETE' })),
          },
          'Delete',
        ),
        h('br'),
        description,
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              act(() =>
                api(`/v2/nvcf/metadata/functions/${f.id}/versions/${f.versionId}`, {
                  method: 'PUT',
                  body: { description: description.value, tags: f.tags ?? [] },
                }),
              ),
          },
          'Save description',
        ),
      ),
    );
  };

  const deploy = (/** @type {FunctionDto} */ f) =>
    api(deployPath(f), {
      method: 'POST',
      body: {
        deploymentSpecifications: [
          {
            gpu: 'CPU',
            instanceType: 'cpu.x1',
            minInstances: Number(deployment.min.value),
            maxInstances: Number(deployment.max.value),
            maxRequestConcurrency: Number(deployment.concurrency.value),
          },
        ],
      },
    });

  const drawCreate = (/** @type {string[]} */ models) => {
    const name = /** @type {HTMLInputElement} */ (
      h('input', { id: 'create-name', required: true, placeholder: 'my-function' })
    );
    const model = /** @type {HTMLSelectElement} */ (
      h(
        'select',
        { id: 'create-model' },
        ...models.map((m) => h('option', { value: m }, m)),
        h('option', { value: '' }, 'upload a file…'),
      )
    );
    const file = /** @type {HTMLInputElement} */ (
      h('input', { type: 'file', accept: '.onnx,.zip', id: 'create-file' })
    );
    const create = async () => {
      // `model-repository://<name>/<version>`, or an uploaded file as version 1 of a model named like the function.
      let [modelName = '', version = '1'] = model.value.replace('model-repository://', '').split('/');
      let uri = model.value;
      if (!uri) {
        const chosen = file.files?.[0];
        if (!chosen) throw new Error('Pick a repository model or an .onnx / .zip file');
        uri = `asset://${await uploadAsset(chosen)}`;
        modelName = name.value;
        version = '1';
      }
      await api(FN, {
        method: 'POST',
        body: {
          name: name.value,
          inferenceUrl: `/v2/models/${modelName}/infer`,
          models: [{ name: modelName, version, uri }],
        },
      });
    };
    replace(
      createForm,
      h(
        'form',
        {
          class: 'inline',
          id: 'create-form',
          onsubmit: (/** @type {Event} */ e) => {
            e.preventDefault();
            act(create);
          },
        },
        h('label', {}, 'Name', name),
        h('label', {}, 'Model', model),
        h('label', {}, '.onnx or model zip', file),
        h('button', { type: 'submit' }, 'Create function'),
      ),
    );
  };

  let refreshes = 0;
  async function refresh() {
    try {
      /** @type {{ functions: FunctionDto[] }} */
      const { functions } = await api(FN);
      functions.sort((a, b) => a.name.localeCompare(b.name) || a.versionId.localeCompare(b.versionId));
      if (!createForm.firstChild) drawCreate(repositoryModels(functions));
      replace(
        table,
        h(
          'table',
          { id: 'functions-table' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Function', 'Version', 'Status', 'Model signature', 'Live instances', ''].map((t) => h('th', {}, t)),
            ),
          ),
          h('tbody', {}, ...functions.map(row)),
        ),
      );
    } catch (err) {
      replace(table, errorText(err));
    }
    // Counts the lists drawn, so a script can tell a fresh list from the one before.
    table.setAttribute('data-refreshed', String(++refreshes));
  }

  return { show: refresh };
}
