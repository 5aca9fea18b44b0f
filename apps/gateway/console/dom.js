/**
 * Builds an element. Text is always set as text (never HTML): names, ids and bodies come from the API.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs] `on…` keys add listeners; others become attributes or properties
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k in el && typeof v !== 'string') Reflect.set(el, k, v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'object' ? c : String(c));
  }
  return el;
}

/** @param {Element} el @param {...(Node | string)} children */
export function replace(el, ...children) {
  el.replaceChildren(...children);
}

/** Shows an action's failure where it happened. @param {unknown} err */
export function errorText(err) {
  return h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err));
}

/**
 * A view's way to run what a button asks: clears `message`, runs the action, shows its failure there, and redraws.
 * @param {HTMLElement} message
 * @param {() => Promise<unknown>} redraw
 * @returns {(action: () => Promise<unknown>) => Promise<void>}
 */
export function actionRunner(message, redraw) {
  return async (action) => {
    replace(message);
    try {
      await action();
    } catch (err) {
      replace(message, errorText(err));
    }
    await redraw();
  };
}

/** Model signature, e.g. `INPUT0 INT32[1,16]`. @param {{ name: string, datatype: string, shape: number[] }[]} ts */
export function signature(ts) {
  return ts.map((t) => `${t.name} ${t.datatype}[${t.shape.join(',')}]`).join(', ');
}

/** JSON with two-space indents but arrays of numbers and strings on one line (tensor data stays readable). */
export function pretty(/** @type {unknown} */ value) {
  return JSON.stringify(value, null, 2).replace(
    /\[\s+([^[\]{}]*?)\s+\]/g,
    (_, inner) => `[${String(inner).split(/,\s+/).join(', ')}]`,
  );
}
