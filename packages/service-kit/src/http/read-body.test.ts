import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { AppError } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { readRequestBody } from './read-body.ts';

const post = (body: Uint8Array | string, headers: Record<string, string> = {}) =>
  new Request('http://x/', { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers });

const streamed = (chunks: number[]) =>
  new Request('http://x/', {
    method: 'POST',
    duplex: 'half',
    body: new ReadableStream({
      start(c) {
        for (const n of chunks) c.enqueue(new Uint8Array(n));
        c.close();
      },
    }),
  } as RequestInit);

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
};

describe('readRequestBody', () => {
  it('reads plain bodies up to the limit, declared or streamed', async () => {
    expect((await readRequestBody(post('abcd', { 'content-length': '4' }), 4)).toString()).toBe('abcd');
    expect((await readRequestBody(streamed([3, 1]), 4)).length).toBe(4);
    expect(await codeOf(readRequestBody(post('abcde', { 'content-length': '5' }), 4))).toBe('PAYLOAD_TOO_LARGE');
    expect(await codeOf(readRequestBody(streamed([3, 3]), 4))).toBe('PAYLOAD_TOO_LARGE');
  });

  it('undoes gzip, zlib deflate and raw deflate', async () => {
    const text = 'hello '.repeat(100);
    for (const [encoding, body] of [
      ['gzip', gzipSync(text)],
      ['x-gzip', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['deflate', deflateRawSync(text)],
      ['GZIP', gzipSync(text)],
      ['identity', Buffer.from(text)],
    ] as const) {
      expect((await readRequestBody(post(body, { 'content-encoding': encoding }), 1000)).toString(), encoding).toBe(
        text,
      );
    }
  });

  it('holds the decompressed size to the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(1 << 20));
    expect(await codeOf(readRequestBody(post(bomb, { 'content-encoding': 'gzip' }), 1 << 16))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    const exact = gzipSync(Buffer.alloc(1000));
    expect((await readRequestBody(post(exact, { 'content-encoding': 'gzip' }), 1000)).length).toBe(1000);
    expect(await codeOf(readRequestBody(post(exact, { 'content-encoding': 'gzip' }), 999))).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses garbage, unknown encodings and bad lengths', async () => {
    expect(await codeOf(readRequestBody(post('nope', { 'content-encoding': 'gzip' }), 100))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(readRequestBody(post('nope', { 'content-encoding': 'deflate' }), 100))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await codeOf(readRequestBody(post('nope', { 'content-encoding': 'br' }), 100))).toBe('INVALID_ARGUMENT');
  });
});
