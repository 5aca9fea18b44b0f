import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Scalar } from '@scalar/hono-api-reference';
import { Hono } from 'hono';

/**
 * Scalar's browser bundle (one self-contained script), served by the service itself rather than fetched from a CDN:
 * the reference renders on machines and networks that reach nothing outside.
 */
const BUNDLE = join(dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference'))), 'browser', 'standalone.js');

export interface ApiReferenceOptions {
  /** Where the page is served, e.g. `/docs`; its script is served beside it, at `<path>/scalar.js`. */
  path: string;
  /** The OpenAPI document the page renders. */
  specUrl: string;
  title: string;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The page's policy: scripts from this origin plus the page's own inline scripts (by hash, so an injected
 * script is not run), data only from this origin, never framed (clickjacking: the reference's "try it" sends
 * requests with the visitor's credential). Styles may be inline: Scalar's components set them at run time.
 */
function apiReferenceCsp(html: string): string {
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) =>
    sha256(m[1] ?? ''),
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${inline.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every response of the reference carries. */
const PAGE_HEADERS = { 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' } as const;

/** An interactive API reference (Scalar) over an OpenAPI document, with nothing loaded from elsewhere. */
export function apiReference(opts: ApiReferenceOptions): Hono {
  const app = new Hono();
  const script = `${opts.path}/scalar.js`;
  let bundle: Promise<Buffer> | undefined;
  const render = Scalar({ url: opts.specUrl, pageTitle: opts.title, cdn: script, withDefaultFonts: false });
  // The page is the same for every request: render it once, and hash its inline script once.
  let page: Promise<{ html: string; csp: string }> | undefined;
  // One parameter: a handler that takes `next` counts as middleware in route listings (the OpenAPI coverage check).
  app.get(opts.path, async (c) => {
    page ??= (async () => {
      const res = await render(c, async () => {});
      const html = res instanceof Response ? await res.text() : '';
      return { html, csp: apiReferenceCsp(html) };
    })();
    const { html, csp } = await page.catch((err: unknown) => {
      page = undefined;
      throw err;
    });
    return c.html(html, 200, { ...PAGE_HEADERS, 'content-security-policy': csp });
  });
  app.get(script, async (c) => {
    bundle ??= readFile(BUNDLE);
    const bytes = await bundle.catch((err: unknown) => {
      bundle = undefined;
      throw err;
    });
    return c.body(new Uint8Array(bytes), 200, {
      ...PAGE_HEADERS,
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=86400',
    });
  });
  return app;
}

/** The routes `apiReference` adds, for route-coverage checks of an OpenAPI document. */
export const apiReferencePaths = (path: string): string[] => [path, `${path}/scalar.js`];
