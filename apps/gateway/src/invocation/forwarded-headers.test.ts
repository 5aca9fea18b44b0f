import { describe, expect, it } from 'vitest';
import { forwardedHeaderNames, forwardedHeaders } from './forwarded-headers.ts';

describe('forwardedHeaders', () => {
  const h = new Headers({
    authorization: 'Bearer secret',
    connection: 'keep-alive, x-hop',
    'x-hop': '1',
    'keep-alive': 'timeout=5',
    'nvcf-reqid': 'spoofed',
    'nvcf-invocation-region': 'x',
    'x-secret-token': 'never persisted',
    'x-custom': 'only when listed',
    accept: 'application/json',
    'inference-header-content-length': '120',
  });

  it('forwards only what a function reads: the binary extension length and Accept', () => {
    expect(forwardedHeaders(h)).toEqual({ accept: 'application/json', 'inference-header-content-length': '120' });
  });

  it("adds the operator's names, but never credentials, hop-by-hop names or nvcf-*", () => {
    expect(
      forwardedHeaders(h, forwardedHeaderNames(['X-Custom', 'authorization', 'x-hop', 'nvcf-reqid', 'keep-alive'])),
    ).toEqual({
      accept: 'application/json',
      'inference-header-content-length': '120',
      'x-custom': 'only when listed',
    });
  });

  it('gives a container function every header but credentials, hop-by-hop names and nvcf-*', () => {
    expect(forwardedHeaders(h, 'all')).toEqual({
      accept: 'application/json',
      'inference-header-content-length': '120',
      'x-custom': 'only when listed',
      'x-secret-token': 'never persisted',
    });
  });
});
