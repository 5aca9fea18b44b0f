/**
 * The kserve section's transport floor: a bare Hono app on @hono/node-server (the worker's HTTP stack,
 * with none of its routes, middleware or inference) that reads the request body and answers a body of
 * the size the path names. Run as a child process by echo-floor.ts; prints `ready` once listening.
 * Env: BENCH_ECHO_PORT.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const port = Number(process.env.BENCH_ECHO_PORT);
/** Answer bodies by size, allocated once: the worker's reply costs an encode, the floor's nothing. */
const bodies = new Map<number, Uint8Array>();
const app = new Hono();
app.post('/echo/:bytes', async (c) => {
  // Read as the worker's readRequestBody does for a Content-Length body.
  await c.req.arrayBuffer();
  const size = Number(c.req.param('bytes'));
  let body = bodies.get(size);
  if (!body) {
    body = new Uint8Array(size).fill(0x20);
    bodies.set(size, body);
  }
  return new Response(body, { status: 200, headers: { 'content-type': 'application/octet-stream' } });
});
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
