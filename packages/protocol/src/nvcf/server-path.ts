/** Longest `inferenceUrl` or health URI accepted (an HTTP request target, not a document). */
export const SERVER_PATH_MAX_LENGTH = 2048;

/** Parsed against a base that can never be a real host: only what stays on it is a path. */
const PROBE_ORIGIN = 'http://server.invalid';

/**
 * A container function's `inferenceUrl` or health URI as the worker may use it: a path (with an optional query)
 * on the function's own server, never an address. WHATWG URL parsing reads `//host/x` and `/\host/x` as another
 * host, and strips tabs and newlines anywhere, so a "starts with /" check let a tenant point the worker at any
 * address it can reach (SSRF). Refused: anything but an absolute path, a second leading slash or backslash, any
 * backslash, whitespace or control character, a fragment, and anything the URL parser moves off the probe origin.
 *
 * @returns the path and query to request, normalised as the URL parser writes them; undefined when refused
 * @example
 * parseServerPath('/v2/models/simple/infer'); // '/v2/models/simple/infer'
 * parseServerPath('//127.0.0.1:6379/x'); // undefined
 */
export function parseServerPath(text: string): string | undefined {
  if (text.length === 0 || text.length > SERVER_PATH_MAX_LENGTH) return undefined;
  if (text[0] !== '/' || text[1] === '/' || text.includes('\\') || text.includes('#')) return undefined;
  // Control characters, space and DEL: the parser drops some of them silently, so the text is not what is sent.
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return undefined;
  }
  let url: URL;
  try {
    url = new URL(text, PROBE_ORIGIN);
  } catch {
    return undefined;
  }
  if (url.origin !== PROBE_ORIGIN || url.username || url.password) return undefined;
  return `${url.pathname}${url.search}`;
}
