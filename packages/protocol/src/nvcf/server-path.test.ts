import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseServerPath } from './server-path.ts';

describe('parseServerPath', () => {
  it('keeps a path and its query', () => {
    expect(parseServerPath('/echo')).toBe('/echo');
    expect(parseServerPath('/v2/models/simple/infer')).toBe('/v2/models/simple/infer');
    expect(parseServerPath('/health?deep=1')).toBe('/health?deep=1');
    expect(parseServerPath('/a/../b')).toBe('/b');
  });

  it('refuses every form that names another host (the SSRF forms a tenant tried)', () => {
    for (const text of [
      '//127.0.0.1:6379/x',
      '/\\127.0.0.1:6379/x',
      '\\\\127.0.0.1/x',
      '/\t/127.0.0.1/x',
      '/\n/evil.example/x',
      'http://127.0.0.1/x',
      '127.0.0.1/x',
      '@evil.example/x',
      '/x#frag',
      '/a b',
      '',
      `/${'a'.repeat(2048)}`,
    ]) {
      expect(parseServerPath(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('never yields anything that resolves off the server it is set on', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (tail) => {
        const path = parseServerPath(`/${tail}`);
        if (path === undefined) return;
        expect(new URL(path, 'http://127.0.0.1:8000').origin).toBe('http://127.0.0.1:8000');
      }),
    );
  });
});
