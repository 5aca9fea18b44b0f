import { describe, expect, it } from 'vitest';
import { CreateFunctionRequest, parseControlRequest, UpdateMetadataRequest } from './function-requests.ts';
import { isPrintableText, printableText } from './printable-text.ts';

describe('isPrintableText', () => {
  it('refuses C0, DEL and C1 controls, separators, lone surrogates and bidi or invisible format characters', () => {
    for (const text of [
      '\x1b[2J',
      'a\x07',
      'tab\t',
      'nl\n',
      'del\x7f',
      'c1\x9b',
      'a\u2028b',
      'x\ud800',
      'a\u202eb',
      'a\u2066b',
      'a\u200bb',
      '\ufeffa',
    ]) {
      expect(isPrintableText(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('takes printable text in any script, emoji sequences included', () => {
    for (const text of ['', 'plain', 'clé de Zoë', '日本語', 'ÿ', '👨‍👩‍👧', 'a\\x1b'])
      expect(isPrintableText(text)).toBe(true);
  });

  it('printableText keeps the checks chained after it', () => {
    const schema = printableText().min(1).max(3);
    expect(schema.safeParse('ab').success).toBe(true);
    expect(schema.safeParse('abcd').success).toBe(false);
    expect(schema.safeParse('\x1b').error?.issues[0]?.message).toMatch(/must not contain control characters/);
  });
});

describe('function requests', () => {
  const fn = { name: 'f', inferenceUrl: '/infer' };
  it('name the field that holds a non-printable character', () => {
    expect(() => parseControlRequest(CreateFunctionRequest, { ...fn, description: 'a\x1b]0;x\x07' })).toThrow(
      /'description' must not contain control characters/,
    );
    expect(() => parseControlRequest(CreateFunctionRequest, { ...fn, tags: ['ok', 'b\u202e'] })).toThrow(
      /'tags' must not contain control characters/,
    );
    expect(() => parseControlRequest(UpdateMetadataRequest, { description: 'two\nlines' })).toThrow(/'description'/);
    expect(parseControlRequest(CreateFunctionRequest, { ...fn, description: 'Zoë’s ✓', tags: ['日本'] })).toMatchObject(
      {
        description: 'Zoë’s ✓',
      },
    );
  });
});
