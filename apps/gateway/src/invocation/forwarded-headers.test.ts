import { describe, expect, it } from 'vitest';
import { forwardedHeaders } from './forwarded-headers.ts';

describe('forwardedHeaders', () => {
  it('strips credentials, hop-by-hop names, names listed in Connection and worker-owned NVCF-*', () => {
    const h = new Headers({
      authorization: 'Bearer secret',
      connection: 'keep-alive, x-hop',
      'x-hop': '1',
      'keep-alive': 'timeout=5',
      'nvcf-reqid': 'spoofed',
      'nvcf-invocation-region': 'x',
      'x-custom': 'kept',
      accept: 'application/json',
    });
    expect(forwardedHeaders(h)).toEqual({ 'x-custom': 'kept', accept: 'application/json' });
  });
});
