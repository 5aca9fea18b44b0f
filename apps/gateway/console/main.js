import { api, session } from './api.js';
import { assetsView } from './assets-view.js';
import { functionsView } from './functions-view.js';
import { keysView } from './keys-view.js';
import { liveView } from './live-view.js';
import { playgroundView } from './playground-view.js';
import { requestsView } from './requests-view.js';

/** @typedef {{ show(arg?: unknown): void | Promise<void>, hide?(): void }} View */

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @type {Record<string, View>} */
const views = {};
let current = '';

/**
 * Switches tab; `arg` is what another view hands over (the function version to invoke or watch).
 * @param {string} tab @param {unknown} [arg]
 */
function open(tab, arg) {
  if (current && current !== tab) views[current]?.hide?.();
  for (const s of document.querySelectorAll('section.tab')) s.toggleAttribute('hidden', s.id !== tab);
  for (const b of document.querySelectorAll('nav button[data-tab]')) {
    b.classList.toggle('active', b.getAttribute('data-tab') === tab);
  }
  current = tab;
  views[tab]?.show(arg);
}

Object.assign(views, {
  functions: functionsView(byId('functions'), open),
  playground: playgroundView(byId('playground')),
  live: liveView(byId('live')),
  requests: requestsView(byId('requests')),
  keys: keysView(byId('keys')),
  assets: assetsView(byId('assets')),
});

function enter() {
  byId('login').hidden = true;
  byId('tabs').hidden = false;
  open('functions');
}

byId('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const key = /** @type {HTMLInputElement} */ (byId('api-key')).value.trim();
  session.login(key);
  try {
    // Any call proves the key; listing functions is the first thing the console shows anyway.
    await api('/v2/nvcf/functions');
    byId('login-error').textContent = '';
    enter();
  } catch (err) {
    session.logout();
    byId('login-error').textContent = `Login failed: ${err instanceof Error ? err.message : String(err)}`;
  }
});
byId('logout').addEventListener('click', () => {
  if (current) views[current]?.hide?.();
  session.logout();
  location.reload();
});
for (const b of document.querySelectorAll('nav button[data-tab]')) {
  b.addEventListener('click', () => open(b.getAttribute('data-tab') ?? 'functions'));
}
if (session.key()) enter();
