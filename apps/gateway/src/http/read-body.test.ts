import { AppError } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { readBodyWithin } from './read-body.ts';

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

describe('readBodyWithin', () => {
  it('reads bodies up to the limit, declared or streamed', async () => {
    const declared = new Request('http://x/', { method: 'POST', body: 'abcd', headers: { 'content-length': '4' } });
    expect((await readBodyWithin(declared, 4)).toString()).toBe('abcd');
    expect((await readBodyWithin(streamed([3, 1]), 4)).length).toBe(4);
  });

  it('refuses a declared length over the limit before reading, and a streamed body once it passes it', async () => {
    const declared = new Request('http://x/', { method: 'POST', body: 'abcde', headers: { 'content-length': '5' } });
    expect(await codeOf(readBodyWithin(declared, 4))).toBe('PAYLOAD_TOO_LARGE');
    expect(await codeOf(readBodyWithin(streamed([3, 3]), 4))).toBe('PAYLOAD_TOO_LARGE');
  });
});
