import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/**
 * CORS for browser clients on any origin. A preflight (`OPTIONS`) is answered by Hono's `cors`; every other
 * response gets its headers once the route has answered. Hono's `cors` writes them before the route runs,
 * which makes Hono rebuild each route's response as a full web `Response` and copy the headers over: on a
 * small pexec that copy was a few percent of the gateway's CPU.
 */
export function corsHeaders(opts: { exposeHeaders: string[]; maxAge: number }): MiddlewareHandler {
  const preflight = cors({ origin: '*', exposeHeaders: opts.exposeHeaders, maxAge: opts.maxAge });
  const headers: [string, string][] = [
    ['access-control-allow-origin', '*'],
    ['access-control-expose-headers', opts.exposeHeaders.join(',')],
  ];
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next);
    await next();
    try {
      for (const [name, value] of headers) c.res.headers.set(name, value);
    } catch {
      // A response whose headers are immutable (one made by `fetch` or `Response.redirect`): a copy takes them.
      const copy = new Response(c.res.body, c.res);
      for (const [name, value] of headers) copy.headers.set(name, value);
      c.res = undefined;
      c.res = copy;
    }
  };
}
