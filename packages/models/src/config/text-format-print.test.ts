import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../examples/prng.ts';
import { SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import { buildTextMessage, parseTextFormat, printTextFormat, textEnum } from './text-format.ts';
import { quoteTextString } from './text-format-print.ts';

const reprint = (text: string) => printTextFormat(parseTextFormat(text));

describe('printTextFormat', () => {
  it('prints one field per line with 2-space indents, repeating repeated fields', () => {
    expect(reprint('name: "m" input { name: "a" dims: 1 dims: 2 } input { name: "b" } empty {}')).toBe(
      'name: "m"\ninput {\n  name: "a"\n  dims: 1\n  dims: 2\n}\ninput {\n  name: "b"\n}\nempty {\n}\n',
    );
  });

  it('keeps list syntax where the source used it, in Triton’s layout', () => {
    expect(reprint(SIMPLE_CONFIG_PBTXT)).toBe(SIMPLE_CONFIG_PBTXT);
    expect(reprint('dims: [] shape: [1,-1]')).toBe('dims: []\nshape: [ 1, -1 ]\n');
  });

  it('prints ShortDebugString form on one line (NV-* headers)', () => {
    const header =
      'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT0" } output { name: "OUTPUT1" }';
    expect(printTextFormat(parseTextFormat(header), { singleLine: true })).toBe(header);
    expect(printTextFormat(parseTextFormat('a {} b: [1, 2] c [{x: 1}, {}]'), { singleLine: true })).toBe(
      'a { } b: [ 1, 2 ] c [ { x: 1 }, { } ]',
    );
  });

  it('prints numbers canonically: source spelling is not kept, values are', () => {
    expect(reprint('a: 0x10 b: 017 c: 1.50 d: -inf e: nan f: 1e21 g: -0x1')).toBe(
      'a: 16\nb: 15\nc: 1.5\nd: -inf\ne: nan\nf: 1e+21\ng: -1\n',
    );
  });

  it('prints an empty message as empty text', () => {
    expect(printTextFormat(parseTextFormat(''))).toBe('');
    expect(printTextFormat(parseTextFormat(''), { singleLine: true })).toBe('');
  });
});

describe('quoteTextString', () => {
  it('escapes quotes, backslashes and control characters', () => {
    expect(quoteTextString('a"b\'c\\d\n\t\r\x01\x7f')).toBe(String.raw`"a\"b\'c\\d\n\t\r\001\177"`);
  });

  it('keeps UTF-8 as is, or escapes its bytes as octal when ASCII is required', () => {
    expect(quoteTextString('é✓')).toBe('"é✓"');
    expect(quoteTextString('é', true)).toBe(String.raw`"\303\251"`);
  });

  it('round-trips arbitrary strings through parse (seeded, 300 cases)', () => {
    const next = mulberry32(7);
    const alphabet = ['a', 'Z', ' ', '"', "'", '\\', '\n', '\t', '\0', '\x7f', 'é', '✓', '😀', '#', '{', '}', ':'];
    for (let i = 0; i < 300; i++) {
      const len = Math.floor(next() * 12);
      let s = '';
      for (let j = 0; j < len; j++) s += alphabet[Math.floor(next() * alphabet.length)];
      for (const ascii of [false, true]) {
        const tree = parseTextFormat(`v: ${quoteTextString(s, ascii)}`);
        expect(tree.fields.get('v')?.values[0]).toMatchObject({ kind: 'string', value: s });
      }
    }
  });
});

describe('buildTextMessage', () => {
  it('builds trees from plain values: strings quoted, textEnum bare, arrays repeated, undefined skipped', () => {
    const msg = buildTextMessage({
      code: textEnum('SUCCESS'),
      msg: undefined,
      server_id: 'inference:0',
      request_id: 7n,
      ok: true,
      ratio: 0.5,
      output: [{ name: 'OUTPUT0', raw: { dims: [16], batch_byte_size: 64 } }],
    });
    expect(printTextFormat(msg, { singleLine: true })).toBe(
      'code: SUCCESS server_id: "inference:0" request_id: 7 ok: true ratio: 0.5 ' +
        'output { name: "OUTPUT0" raw { dims: 16 batch_byte_size: 64 } }',
    );
  });

  it('prints ASCII-only header values when asked', () => {
    const msg = buildTextMessage({ code: textEnum('NOT_FOUND'), msg: "no model 'é'" });
    expect(printTextFormat(msg, { singleLine: true, asciiOnly: true })).toBe(
      String.raw`code: NOT_FOUND msg: "no model \'\303\251\'"`,
    );
  });

  it('round-trips through parse and print', () => {
    const text = printTextFormat(buildTextMessage({ a: [1, 2], b: { c: 'x' } }));
    expect(reprint(text)).toBe(text);
  });
});
