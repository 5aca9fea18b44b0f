import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { AppError } from '@nvcf/protocol';
import { freePort } from '@nvcf/testing';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from './object-store.ts';
import { createS3Store } from './s3-store.ts';

// s3rver speaks the S3 protocol over HTTP (a real server, file-backed), so the store is tested against
// the wire format it will meet in MinIO or S3.
let server: S3rver;
let dir: string;
let store: ObjectStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-s3-'));
  const port = await freePort();
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
});
