import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { serve } from '@hono/node-server';
import { AppError } from '@nvcf/protocol';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeIncoming, readRequestBody } from './read-body.ts';

/**
 * readRequestBody's copy-once path, as the worker and gateway use it: @hono/node-server in front, the body read
 * straight from Node's IncomingMessage. Each request's outcome is recorded server-side, so a client that
 * leaves early can still be checked.
 */
describe('readRequestBody from a Node request', () => {
  const outcomes: { path: string; bytes?: Buffer; code?: string; fromNode: boolean }[] = [];
  const reading = new Set<string>();
  let server: ReturnType<typeof serve>;
  let base: string;
  let port: number;

  beforeAll(async () => {
    const app = new Hono();
    app.post('/:name', async (c) => {
      const incoming = nodeIncoming(c.env);
      reading.add(c.req.param('name'));
      if (c.req.param('name') === 'sent-then-gone' && incoming) {
        // Read only once the client's close has reached the server, which then aborts the request.
        if (!incoming.destroyed) await new Promise((resolve) => incoming.once('close', resolve));
      }
      try {
        const bytes = await readRequestBody(c.req.raw, 4 << 20, incoming);
        outcomes.push({ path: c.req.param('name'), bytes, fromNode: incoming !== undefined });
        return c.json({ length: bytes.length });
      } catch (err) {
        const code = err instanceof AppError ? err.code : String(err);
        outcomes.push({ path: c.req.param('name'), code, fromNode: incoming !== undefined });
        return c.json({ code }, 400);
      }
    });
    server = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const outcome = async (path: string) => {
    await expect.poll(() => outcomes.some((o) => o.path === path), { timeout: 10_000 }).toBe(true);
    return outcomes.find((o) => o.path === path);
  };

  it('reads a large body byte for byte, in one buffer of its own', async () => {
    const body = randomBytes(3 << 20);
    const res = await fetch(`${base}/large`, { method: 'POST', body });
    expect(await res.json()).toEqual({ length: body.length });
    const seen = await outcome('large');
    expect(seen?.fromNode).toBe(true);
    expect(seen?.bytes?.equals(body)).toBe(true);
    // A buffer of exactly the body's size: the executor can move it to a model thread whole.
    expect(seen?.bytes?.buffer.byteLength).toBe(body.length);
  });

  it('reads empty and gzip bodies, and refuses one over the limit before reading it', async () => {
    await fetch(`${base}/empty`, { method: 'POST', body: new Uint8Array(0) });
    expect((await outcome('empty'))?.bytes?.length).toBe(0);

    const text = 'tensor '.repeat(10_000);
    await fetch(`${base}/gzip`, { method: 'POST', body: gzipSync(text), headers: { 'content-encoding': 'gzip' } });
    expect((await outcome('gzip'))?.bytes?.toString()).toBe(text);

    const res = await fetch(`${base}/over`, { method: 'POST', body: new Uint8Array((4 << 20) + 1) });
    expect(res.status).toBe(400);
    expect((await outcome('over'))?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers CANCELLED when the client leaves halfway through the body, and the server keeps serving', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /halfway HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n');
    socket.write(Buffer.alloc(40_000, 7));
    // Leave once the route is reading the body.
    await expect.poll(() => reading.has('halfway'), { timeout: 10_000 }).toBe(true);
    socket.destroy();
    const seen = await outcome('halfway');
    expect(seen?.fromNode).toBe(true);
    expect(seen?.code).toBe('CANCELLED');

    const res = await fetch(`${base}/after`, { method: 'POST', body: 'still here' });
    expect(await res.json()).toEqual({ length: 10 });
  });

  it('accepts a whole body whose client closed right after sending it (a retry after a dropped connection)', async () => {
    // Small enough for Node to parse whole before the route reads it (larger bodies wait in the socket).
    const body = randomBytes(50_000);
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.end(
      Buffer.concat([
        Buffer.from(`POST /sent-then-gone HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`),
        body,
      ]),
    );
    await new Promise((resolve) => socket.once('finish', resolve));
    socket.destroy();
    const seen = await outcome('sent-then-gone');
    expect(seen?.fromNode).toBe(true);
    expect(seen?.code).toBeUndefined();
    expect(seen?.bytes?.equals(body)).toBe(true);
  });

  it('is undefined outside @hono/node-server (app.request in tests, other runtimes)', async () => {
    const app = new Hono();
    app.get('/', (c) => c.text(String(nodeIncoming(c.env))));
    expect(await (await app.request('/')).text()).toBe('undefined');
    expect(nodeIncoming({ incoming: {} })).toBeUndefined();
  });
});
