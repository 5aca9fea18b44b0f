import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { AppError } from '@nvcf/protocol';
import { freePort } from '@nvcf/testing';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from './object-store.ts';
import { createS3Store, S3_MIN_PART_SIZE } from './s3-store.ts';

const MiB = 1024 * 1024;

/**
 * An HTTP proxy in front of s3rver that records what the store sends and receives, and lets a test
 * wait for a condition on it (no timers: the test proceeds when the bytes are there).
 */
function createTap(upstreamPort: number) {
  const state = { requests: [] as string[], bytesIn: 0, bytesOut: 0 };
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const w of waiters) w();
  };
  const server: Server = createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    const up = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.on('data', (chunk: Buffer) => {
          state.bytesOut += chunk.length;
          if (!res.write(chunk)) upRes.pause();
          changed();
        });
        res.on('drain', () => upRes.resume());
        upRes.on('end', () => res.end());
      },
    );
    req.on('data', (chunk: Buffer) => {
      state.bytesIn += chunk.length;
      changed();
    });
    req.pipe(up);
  });
  return {
    state,
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    until(cond: () => boolean): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (!cond()) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Deterministic bytes: chunk `i` is filled with `i % 251`. */
const chunkOf = (i: number, size = 256 * 1024) => Buffer.alloc(size, i % 251);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// s3rver speaks the S3 protocol over HTTP (a real server, file-backed), so the store is tested against
// the wire format it will meet in MinIO or S3.
let server: S3rver;
let dir: string;
let store: ObjectStore;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-s3-'));
  port = await freePort();
  server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir });
  await server.run();
  store = await createS3Store({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    bucket: 'nvcf-test',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    maxBytes: 1024,
  });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('S3 object store', () => {
  it('puts, gets with metadata, tells existence, deletes', async () => {
    await store.put('assets/a', Buffer.from('hello'), {
      contentType: 'text/plain',
      metadata: { 'nvcf-asset-description': 'd' },
    });
    expect(await store.exists('assets/a')).toBe(true);
    const got = await store.get('assets/a');
    expect(got?.contentType).toBe('text/plain');
    expect(got?.metadata['nvcf-asset-description']).toBe('d');
    expect(got?.size).toBe(5);
    expect((await buffer(got?.body as Readable)).toString()).toBe('hello');
    await store.put('assets/a', Readable.from([Buffer.from('re'), Buffer.from('placed')]), {
      contentType: 'text/plain',
    });
    expect((await buffer((await store.get('assets/a'))?.body as Readable)).toString()).toBe('replaced');
    await store.delete('assets/a');
    expect(await store.exists('assets/a')).toBe(false);
    expect(await store.get('assets/a')).toBeUndefined();
  });

  it('refuses a body over the limit, streamed or not, and stores nothing', async () => {
    const big = Buffer.alloc(2000, 1);
    await expect(store.put('x/big', big, { contentType: 'application/octet-stream' })).rejects.toBeInstanceOf(AppError);
    await expect(store.put('x/big', Readable.from([big]), { contentType: 'application/octet-stream' })).rejects.toThrow(
      /exceeds 1024/,
    );
    expect(await store.exists('x/big')).toBe(false);
  });

  describe('through a recording proxy', () => {
    let tap: ReturnType<typeof createTap>;
    let tapped: ObjectStore;
    beforeAll(async () => {
      tap = createTap(port);
      tapped = await createS3Store({
        endpoint: await tap.listen(),
        region: 'us-east-1',
        bucket: 'nvcf-test',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        maxBytes: 8 * MiB,
      });
    });
    afterAll(() => tap.close());

    it('streams a large put in parts: the server has a part while the source is still open', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const chunks = 28; // 7 MiB: one full part, then the rest once the gate opens
      const source = Readable.from(
        (async function* () {
          for (let i = 0; i < chunks; i++) {
            if (i === 24) await gate; // 6 MiB were handed over
            yield chunkOf(i);
          }
        })(),
      );
      const before = tap.state.bytesIn;
      const put = tapped.put('big/streamed', source, { contentType: 'application/octet-stream' });
      // Buffering the whole body first would never send a byte while the gate is shut.
      await tap.until(() => tap.state.bytesIn - before >= S3_MIN_PART_SIZE);
      expect(tap.state.requests.some((r) => /^PUT \/nvcf-test\/big\/streamed\?.*partNumber=1/.test(r))).toBe(true);
      release();
      expect(await put).toEqual({ size: chunks * 256 * 1024 });
      const got = await tapped.get('big/streamed');
      expect(got?.size).toBe(chunks * 256 * 1024);
      const expected = Buffer.concat(Array.from({ length: chunks }, (_, i) => chunkOf(i)));
      expect(sha(await buffer(got?.body as Readable))).toBe(sha(expected));
    });

    it('refuses a streamed body at the limit, stops reading it, aborts the multipart upload', async () => {
      let pulled = 0;
      const endless = Readable.from(
        (async function* () {
          for (let i = 0; ; i++) {
            pulled += 256 * 1024;
            yield chunkOf(i);
          }
        })(),
      );
      const err = await tapped
        .put('big/refused', endless, { contentType: 'application/octet-stream' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: `object exceeds ${8 * MiB} bytes` });
      expect(endless.destroyed).toBe(true);
      expect(pulled).toBeLessThan(10 * MiB);
      expect(tap.state.requests.some((r) => /^DELETE \/nvcf-test\/big\/refused\?.*uploadId=/.test(r))).toBe(true);
      expect(await tapped.exists('big/refused')).toBe(false);
      expect(await tapped.get('big/refused')).toBeUndefined();
    });

    it('gets as a stream: the object is not read before the caller reads it', async () => {
      const size = 32 * MiB;
      await store.put(
        'big/read',
        Readable.from(Array.from({ length: 128 }, (_, i) => chunkOf(i))),
        {
          contentType: 'application/octet-stream',
        },
        { maxBytes: size },
      );
      const before = tap.state.bytesOut;
      const got = await tapped.get('big/read');
      expect(got?.size).toBe(size);
      // Socket buffers hold a few MiB at most; a buffered get would have read all 32.
      expect(tap.state.bytesOut - before).toBeLessThan(size / 2);
      const expected = Buffer.concat(Array.from({ length: 128 }, (_, i) => chunkOf(i)));
      expect(sha(await buffer(got?.body as Readable))).toBe(sha(expected));
    });
  });
});
