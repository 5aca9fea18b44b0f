import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import type { MiddlewareHandler } from 'hono';

const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);

type Coding = 'gzip' | 'deflate';

/**
 * Compresses a successful response's body as the request's `Accept-Encoding` asks (`preferredCoding`), as
 * Triton and tritonclient's `response_compression_algorithm` expect (Triton HTTP server: compression). Triton
 * compresses successful infer responses only: mount this on the infer route, nowhere else, so that clients
 * that read other answers raw (async clients with automatic decompression off) get plain JSON. Error
 * answers stay plain too. Bodies are already whole in memory, so node:zlib compresses them in one go and the
 * response keeps a Content-Length. `Inference-Header-Content-Length` is left as it is: it counts bytes of the
 * decompressed body.
 */
export function compressResponse(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const coding = preferredCoding(c.req.header('accept-encoding'));
    const res = c.res;
    if (!coding || res.status !== 200 || !res.body || res.headers.has('content-encoding') || c.req.method === 'HEAD')
      return;
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

/**
 * The coding Triton would pick from an `Accept-Encoding` value, or undefined (identity): of `identity`,
 * `gzip` and `deflate` (others, `*` included, do not count), the one with the strictly greatest q-value; a tie
 * keeps the earlier, and q=0 never wins. Triton's own parser is stricter about spaces; these are trimmed.
 */
export function preferredCoding(header: string | undefined): Coding | undefined {
  if (!header) return undefined;
  let best: Coding | 'identity' | undefined;
  let bestQ = 0;
  for (const part of header.split(',')) {
    const [rawName = '', ...params] = part.split(';');
    const name = rawName.trim().toLowerCase();
    if (name !== 'gzip' && name !== 'deflate' && name !== 'identity') continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() === 'q') q = Number(v);
    }
    if (!Number.isFinite(q)) continue;
    if (q > bestQ) {
      best = name;
      bestQ = q;
    }
  }
  return best === 'identity' ? undefined : best;
}
