import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import type { MiddlewareHandler } from 'hono';

const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);

type Coding = 'gzip' | 'deflate';

/**
 * Compresses a response body as the request's `Accept-Encoding` asks (gzip or deflate, by q-value, gzip
 * on a tie), as Triton and tritonclient's `response_compression_algorithm` expect
 * (Triton HTTP server: compression). Bodies are already whole in memory, so node:zlib compresses them
 * in one go and the response keeps a Content-Length. `Inference-Header-Content-Length` is left as it is:
 * it counts bytes of the decompressed body.
 */
export function compressResponse(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const coding = preferredCoding(c.req.header('accept-encoding'));
    const res = c.res;
    if (!coding || !res.body || res.headers.has('content-encoding') || c.req.method === 'HEAD') return;
    const plain = Buffer.from(await res.arrayBuffer());
    if (plain.length === 0) {
      c.res = new Response(null, res);
      return;
    }
    const body = coding === 'gzip' ? await gzipAsync(plain) : await deflateAsync(plain);
    const headers = new Headers(res.headers);
    headers.set('content-encoding', coding);
    headers.set('content-length', String(body.length));
    headers.append('vary', 'Accept-Encoding');
    // Replacing c.res merges the old headers back in; unset first so our Content-Length wins.
    c.res = undefined;
    c.res = new Response(new Uint8Array(body.buffer, body.byteOffset, body.length), {
      status: res.status,
      headers,
    });
  };
}

/** The best of gzip/deflate the client accepts, or undefined (identity). */
export function preferredCoding(header: string | undefined): Coding | undefined {
  if (!header) return undefined;
  let best: Coding | undefined;
  let bestQ = 0;
  for (const part of header.split(',')) {
    const [rawName = '', ...params] = part.split(';');
    const name = rawName.trim().toLowerCase();
    const coding: Coding | undefined =
      name === 'gzip' || name === 'x-gzip' ? 'gzip' : name === 'deflate' ? 'deflate' : undefined;
    if (!coding) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() === 'q') q = Number(v);
    }
    if (!Number.isFinite(q) || q <= 0) continue;
    if (q > bestQ || (q === bestQ && coding === 'gzip')) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}
