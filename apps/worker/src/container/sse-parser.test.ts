import { describe, expect, it } from 'vitest';
import { createSseParser } from './sse-parser.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('createSseParser', () => {
  it('yields each event as its blank line arrives, whatever the chunking', () => {
    const p = createSseParser();
    expect(p.push(bytes('event: token\ndata: {"n":0}\n'))).toEqual([]);
    expect(p.push(bytes('\ndata: {"n"'))).toEqual(['{"n":0}']);
    expect(p.push(bytes(':1}\r\n\r\ndata: [DONE]\n\n'))).toEqual(['{"n":1}', '[DONE]']);
    expect(p.end()).toEqual([]);
  });

  it('joins multi-line data, drops comments and other fields, keeps an unterminated last event', () => {
    const p = createSseParser();
    expect(p.push(bytes(': comment\nid: 7\nretry: 10\ndata:a\ndata: b\ndata\n\n'))).toEqual(['a\nb\n']);
    expect(p.push(bytes('data: tail'))).toEqual([]);
    expect(p.push(bytes('\n'))).toEqual([]);
    expect(p.end()).toEqual(['tail']);
  });

  it('decodes UTF-8 split across chunks', () => {
    const p = createSseParser();
    const all = bytes('data: héllo\n\n');
    expect([...p.push(all.slice(0, 8)), ...p.push(all.slice(8))]).toEqual(['héllo']);
  });
});
