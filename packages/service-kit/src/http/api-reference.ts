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

/** An interactive API reference (Scalar) over an OpenAPI document, with nothing loaded from elsewhere. */
export function apiReference(opts: ApiReferenceOptions): Hono {
  const app = new Hono();
  const script = `${opts.path}/scalar.js`;
  let bundle: Promise<Buffer> | undefined;
  app.get(opts.path, Scalar({ url: opts.specUrl, pageTitle: opts.title, cdn: script, withDefaultFonts: false }));
  app.get(script, async (c) => {
    bundle ??= readFile(BUNDLE);
    const bytes = await bundle.catch((err: unknown) => {
      bundle = undefined;
      throw err;
    });
    return c.body(new Uint8Array(bytes), 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=86400',
    });
  });
  return app;
}

/** The routes `apiReference` adds, for route-coverage checks of an OpenAPI document. */
export const apiReferencePaths = (path: string): string[] => [path, `${path}/scalar.js`];
