import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import type { ObjectStore } from '@nvcf/storage';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createResultLinks } from './result-links.ts';

const run = promisify(execFile);
const SIZE = 1024 * 1024;

/**
 * The deliberate seam: an object store whose object fails after its first chunk, as an S3 connection
 * reset or a disk error does mid-download. Everything else is real (the route, @hono/node-server, curl).
 */
function failingStore(): ObjectStore {
  return {
    async get() {
      const body = new Readable({ read() {} });
      body.push(Buffer.alloc(64 * 1024, 1));
      setImmediate(() => body.destroy(new Error('connection reset by the object store')));
      return { body, size: SIZE, contentType: 'application/zip', metadata: {} };
    },
    put: () => Promise.reject(new Error('not used')),
    delete: () => Promise.resolve(),
    exists: () => Promise.resolve(true),
  };
}

let close: (() => void) | undefined;
afterEach(() => close?.());

describe('a result whose stored bytes fail mid-download', () => {
  it('ends that response short (curl: partial file), logs it with the request id, and serves on', async () => {
    const lines: { msg: string; requestId?: string }[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(JSON.parse(chunk.toString()) as { msg: string }));
    const links = createResultLinks({
      objects: failingStore(),
      signingSecret: 'a-test-secret-of-at-least-32-characters',
      objectKey: (id) => `results/${id}.zip`,
      logger: pino({ level: 'info' }, sink),
    });
    const app = links.routes();
    app.get('/ping', (c) => c.text('pong'));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    close = () => server.close();
    await new Promise((r) => server.once('listening', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const requestId = randomUUID();
    const failed = await run('curl', ['-s', '-o', '/dev/null', links.url(requestId, origin)]).catch(
      (err: { code: number }) => err,
    );
    // 18: "Partial file. Only a part of the file was transferred": the client knows it is short.
    expect('code' in failed ? failed.code : 0).toBe(18);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'response body failed mid-stream', requestId }));
    expect(await (await fetch(`${origin}/ping`)).text()).toBe('pong');
  });
});
