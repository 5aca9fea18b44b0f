// Every call the console makes: the gateway's public API, same origin, with the key the user entered.
const KEY = 'nvcf-console-key';

export const session = {
  key: () => sessionStorage.getItem(KEY),
  /** @param {string} key */
  login: (key) => sessionStorage.setItem(KEY, key),
  logout: () => sessionStorage.removeItem(KEY),
};

/** A failed API call, with the problem+json detail the gateway gave. */
export class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * A raw call: the caller reads status, headers and body itself (the playground shows them all).
 * @param {string} path @param {RequestInit} [init]
 */
export function call(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${session.key() ?? ''}`);
  return fetch(path, { ...init, headers });
}

/**
 * A JSON call that throws an ApiError on a 4xx/5xx; `undefined` for an empty body (204).
 * @param {string} path @param {{ method?: string, body?: unknown }} [opts]
 */
export async function api(path, opts = {}) {
  const init = { method: opts.method ?? 'GET' };
  if (opts.body !== undefined) {
    Object.assign(init, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(opts.body) });
  }
  const res = await call(path, init);
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiError(res.status, body?.detail ?? body?.title ?? `${res.status} ${res.statusText}`);
  return body;
}
