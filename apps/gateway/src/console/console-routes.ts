import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { SCOPES } from '@nvcf/protocol';
import { Hono } from 'hono';

/** Where the web console is served (no credential: the page asks for an API key and sends it on each API call). */
export const CONSOLE_PATH = '/console';

/** The console's files: plain ES modules, HTML and CSS in the repository, served as they are (no build step). */
const CONSOLE_DIR = join(import.meta.dirname, '..', '..', 'console');

const JAVASCRIPT = 'text/javascript; charset=utf-8';
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': JAVASCRIPT,
  '.css': 'text/css; charset=utf-8',
};

/**
 * The page may load and call nothing but this origin: no CDN, no web font, no third-party script, no inline
 * script, even if a future edit tries (the browser refuses it).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const FILE_ROUTE = '/console/:file{[a-z0-9-]+\\.(?:js|css|html)}';
/** The scope list as a module, made from the gateway's own (`SCOPES`): the key form never lags behind the API. */
const SCOPES_ROUTE = '/console/scopes.js';
/** The paths the console adds, for route-coverage checks of the OpenAPI document (it documents the API only). */
export const consolePaths = (): string[] => [CONSOLE_PATH, SCOPES_ROUTE, FILE_ROUTE];

/**
 * `GET /console` (the page) and `GET /console/<file>` (its modules and style sheet). File names are matched by a
 * pattern of lowercase names with a known extension, so no path ever leaves the console's directory.
 */
export function consoleRoutes(): Hono {
  const app = new Hono();
  const cache = new Map<string, Promise<Buffer>>();
  const serveFile = async (name: string) => {
    const type = TYPES[extname(name)];
    if (!type) return undefined;
    let bytes = cache.get(name);
    if (!bytes) {
      bytes = readFile(join(CONSOLE_DIR, name));
      cache.set(name, bytes);
    }
    const body = await bytes.catch((err: unknown) => {
      cache.delete(name);
      if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!body) return undefined;
    return new Response(new Uint8Array(body), {
      headers: { 'content-type': type, 'content-security-policy': CSP, 'cache-control': 'no-cache' },
    });
  };
  const scopesModule = `export const SCOPES = ${JSON.stringify(SCOPES)};\n`;
  app.get(CONSOLE_PATH, async (c) => (await serveFile('index.html')) ?? c.notFound());
  app.get(
    SCOPES_ROUTE,
    () =>
      new Response(scopesModule, {
        headers: { 'content-type': JAVASCRIPT, 'content-security-policy': CSP, 'cache-control': 'no-cache' },
      }),
  );
  app.get(FILE_ROUTE, async (c) => (await serveFile(c.req.param('file'))) ?? c.notFound());
  return app;
}
