import { describe, expect, it } from 'vitest';
import { parseTextFormat, type TextMessage, type TextValue } from './text-format.ts';

/** The tree without positions: scalars as plain values, messages as objects of arrays. */
function plain(msg: TextMessage): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const f of msg.fields.values()) out[f.name] = f.values.map(plainValue);
  return out;
}
function plainValue(v: TextValue): unknown {
  if (v.kind === 'message') return plain(v);
  if (v.kind === 'identifier') return { ident: v.value };
  return v.value;
}
const parse = (text: string) => plain(parseTextFormat(text, { source: 'config.pbtxt' }));

/** The message thrown by parsing `text`. */
function errorOf(text: string): string {
  try {
    parseTextFormat(text, { source: 'config.pbtxt' });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('parseTextFormat: fields', () => {
  it('reads scalar fields and nested messages in all bracket styles', () => {
    expect(parse('a: 1 b { c: "x" } d: { e: 2 } f < g: 3 > h: < i: 4 >')).toEqual({
      a: [1n],
      b: [{ c: ['x'] }],
      d: [{ e: [2n] }],
      f: [{ g: [3n] }],
      h: [{ i: [4n] }],
    });
  });

  it('collects repetition and list syntax into one ordered field', () => {
    expect(parse('dims: 1 dims: [2, -1] dims: 3')).toEqual({ dims: [1n, 2n, -1n, 3n] });
    expect(parse('input [ { name: "a" }, { name: "b" } ] input: [{ name: "c" }]')).toEqual({
      input: [{ name: ['a'] }, { name: ['b'] }, { name: ['c'] }],
    });
  });

  it('marks list syntax and keeps an empty list as a present field with no values', () => {
    const tree = parseTextFormat('dims: [] name: "x" shape: [ 1 ]');
    expect(tree.fields.get('dims')).toMatchObject({ values: [], listSyntax: true });
    expect(tree.fields.get('name')?.listSyntax).toBe(false);
    expect(tree.fields.get('shape')?.listSyntax).toBe(true);
  });

  it('accepts optional , and ; separators after fields', () => {
    expect(parse('a: 1, b: 2; c { d: 3; }, e: 4')).toEqual({ a: [1n], b: [2n], c: [{ d: [3n] }], e: [4n] });
  });

  it('skips # comments anywhere, including after values and inside lists', () => {
    const text = '# header\nmax_batch_size: 8 # eight\ndims: [ 16, # first\n -1 ]\n# trailing';
    expect(parse(text)).toEqual({ max_batch_size: [8n], dims: [16n, -1n] });
  });

  it('reads map fields as repeated key/value messages (no schema needed)', () => {
    expect(parse('parameters { key: "x" value { string_value: "y" } } parameters { key: "z" value: { } }')).toEqual({
      parameters: [
        { key: ['x'], value: [{ string_value: ['y'] }] },
        { key: ['z'], value: [{}] },
      ],
    });
  });

  it('parses empty input and whitespace-only input to an empty message', () => {
    expect(parse('')).toEqual({});
    expect(parse('  \n\t# only a comment\n')).toEqual({});
  });

  it('records 1-based positions of field names and values', () => {
    const tree = parseTextFormat('name: "m"\n  max_batch_size:   8');
    const field = tree.fields.get('max_batch_size')!;
    expect(field.pos).toEqual({ line: 2, column: 3 });
    expect(field.values[0]!.pos).toEqual({ line: 2, column: 21 });
  });
});

describe('parseTextFormat: scalars', () => {
  it('reads decimal, hex, octal and negative integers exactly', () => {
    expect(parse('a: 42 b: 0x1F c: 0X10 d: 017 e: -5 f: - 6 g: 0 h: 18446744073709551615 i: -0x10')).toEqual({
      a: [42n],
      b: [31n],
      c: [16n],
      d: [15n],
      e: [-5n],
      f: [-6n],
      g: [0n],
      h: [18446744073709551615n],
      i: [-16n],
    });
  });

  it('keeps the source spelling of numbers', () => {
    const v = parseTextFormat('a: -0x1f').fields.get('a')!.values[0]!;
    expect(v).toMatchObject({ kind: 'int', text: '-0x1f', value: -31n });
  });

  it('reads floats with fractions, exponents, f suffixes and leading dots', () => {
    expect(parse('a: 1.5 b: -2.25 c: 1e3 d: 2.5E-2 e: .5 f: 1.5f g: 3. h: 1e+2')).toEqual({
      a: [1.5],
      b: [-2.25],
      c: [1000],
      d: [0.025],
      e: [0.5],
      f: [1.5],
      g: [3],
      h: [100],
    });
  });

  it('reads inf and nan: signed ones as floats, bare ones as identifiers for the schema to decide', () => {
    const tree = parse('a: -inf b: -nan c: inf d: nan e: -Infinity');
    expect(tree.a).toEqual([Number.NEGATIVE_INFINITY]);
    expect(Number.isNaN(tree.b![0])).toBe(true);
    expect(tree.c).toEqual([{ ident: 'inf' }]);
    expect(tree.d).toEqual([{ ident: 'nan' }]);
    expect(tree.e).toEqual([Number.NEGATIVE_INFINITY]);
  });

  it('reads true/false and enum names as identifiers', () => {
    expect(parse('a: true b: false c: TYPE_FP32 d: KIND_CPU')).toEqual({
      a: [{ ident: 'true' }],
      b: [{ ident: 'false' }],
      c: [{ ident: 'TYPE_FP32' }],
      d: [{ ident: 'KIND_CPU' }],
    });
  });
});

describe('parseTextFormat: strings', () => {
  it('accepts single and double quotes', () => {
    expect(parse(`a: "x'y" b: 'x"y'`)).toEqual({ a: [`x'y`], b: ['x"y'] });
  });

  it('decodes C escapes', () => {
    expect(parse(String.raw`a: "\n\t\r\\\"\'\a\b\f\v\?"`)).toEqual({ a: ['\n\t\r\\"\'\x07\b\f\v?'] });
  });

  it('decodes hex and octal escapes as bytes, assembled as UTF-8', () => {
    expect(parse(String.raw`a: "\x41\102\0" b: "\303\251" c: "\xc3\xa9t"`)).toEqual({
      a: ['AB\0'],
      b: ['é'],
      c: ['ét'],
    });
    expect(parse(String.raw`a: "\101\1012"`)).toEqual({ a: ['AA2'] });
  });

  it('decodes \\u and \\U escapes and keeps raw UTF-8', () => {
    expect(parse(String.raw`a: "\u00e9\U0001F600" b: "héllo ✓"`)).toEqual({ a: ['é😀'], b: ['héllo ✓'] });
  });

  it('concatenates adjacent string literals', () => {
    expect(parse(`a: "ab" 'cd'\n  "ef" b: 1`)).toEqual({ a: ['abcdef'], b: [1n] });
  });
});

describe('parseTextFormat: errors name the place', () => {
  it('reports a field name with neither : nor {', () => {
    expect(errorOf('name: "m"\nmax_batch_size: 8\ninput {\n  dims 16\n}')).toBe(
      "config.pbtxt:4:8: expected ':' or '{' after field name 'dims'",
    );
  });

  it('reports the exact column after the name', () => {
    expect(errorOf('a: 1\nb: 2\nfoo   dims 3')).toBe("config.pbtxt:3:7: expected ':' or '{' after field name 'foo'");
  });

  it.each([
    ['a: "abc', 'config.pbtxt:1:4: unterminated string literal'],
    ['a: "ab\ncd"', 'config.pbtxt:1:4: unterminated string literal'],
    [String.raw`a: "\q"`, String.raw`config.pbtxt:1:5: invalid escape sequence '\q'`],
    [String.raw`a: "\x"`, String.raw`config.pbtxt:1:5: invalid escape sequence '\x'`],
    [String.raw`a: "\400"`, String.raw`config.pbtxt:1:5: invalid escape sequence '\4'`],
    [String.raw`a: "\xff"`, 'config.pbtxt:1:4: string literal is not valid UTF-8'],
    ['a { b: 1', "config.pbtxt:1:9: expected '}' to close the message, found end of input"],
    ['a: }', "config.pbtxt:1:4: expected a value for field 'a', found '}'"],
    ['a: 1 }', "config.pbtxt:1:6: expected a field name, found '}'"],
    ['a: [1 2]', "config.pbtxt:1:7: expected ',' or ']' in the list for 'a', found '2'"],
    ['a: [1,]', "config.pbtxt:1:7: expected a value for field 'a', found ']'"],
    ['a [1]', "config.pbtxt:1:4: expected '{' for an element of message list 'a' (a list of values needs 'a: [')"],
    ['a: -x', "config.pbtxt:1:5: expected a number after '-', found 'x'"],
    ['a: 16abc', "config.pbtxt:1:6: need space between number '16' and identifier"],
    ['a: 09', "config.pbtxt:1:4: invalid octal number '09'"],
    ['a: 0x', "config.pbtxt:1:4: '0x' needs hex digits"],
    ['a: 1 @', "config.pbtxt:1:6: unexpected character '@'"],
    ['[ext]: 1', "config.pbtxt:1:1: expected a field name, found '['"],
    ['[a.b]: 1', "config.pbtxt:1:3: unexpected character '.'"],
  ])('%j → %s', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('uses <text> when no source is named, and is an INVALID_ARGUMENT AppError', () => {
    try {
      parseTextFormat('a b');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({
        name: 'TextFormatError',
        code: 'INVALID_ARGUMENT',
        line: 1,
        column: 3,
        source: '<text>',
        reason: "expected ':' or '{' after field name 'a'",
      });
    }
  });

  it('refuses nesting deeper than 100 levels instead of overflowing the stack', () => {
    const deep = `${'a { '.repeat(150)}${'} '.repeat(150)}`;
    expect(errorOf(deep)).toMatch(/nested deeper than 100 levels/);
    const ok = `${'a { '.repeat(50)}${'} '.repeat(50)}`;
    expect(() => parseTextFormat(ok)).not.toThrow();
  });
});
