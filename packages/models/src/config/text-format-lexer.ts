import { TextFormatError, type TextPosition } from './text-format-tree.ts';

/**
 * Tokens of protobuf text format, following protobuf's own tokenizer (io/tokenizer.cc) where Triton configs
 * can tell the difference: `#` comments, C escapes in either quote style, hex/octal integers, `f`-suffixed floats,
 * and a separate `-` token (so `- 5` is a valid negative number, as in protobuf).
 */
export type Token =
  | { type: 'identifier'; text: string; pos: TextPosition }
  | { type: 'int'; text: string; value: bigint; pos: TextPosition }
  | { type: 'float'; text: string; value: number; pos: TextPosition }
  | { type: 'string'; text: string; value: string; pos: TextPosition }
  | { type: 'symbol'; text: string; pos: TextPosition }
  | { type: 'eof'; text: ''; pos: TextPosition };

const SYMBOLS = new Set(['{', '}', '<', '>', '[', ']', ':', ',', ';', '-']);
const SIMPLE_ESCAPES: Record<string, number> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  '\\': 0x5c,
  '?': 0x3f,
  "'": 0x27,
  '"': 0x22,
};

const isDigit = (c: string) => c >= '0' && c <= '9';
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);
const isOctal = (c: string) => c >= '0' && c <= '7';
const isIdentStart = (c: string) => /^[A-Za-z_]$/.test(c);
const isIdentPart = (c: string) => /^[A-Za-z0-9_]$/.test(c);

// Escapes produce bytes (\xNN, \NNN) as well as characters, so a string is assembled as UTF-8 and decoded once.
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Splits text into tokens.
 *
 * @example
 * tokenize('dims: [ 16 ]', 'config.pbtxt').map((t) => t.text); // ['dims', ':', '[', '16', ']', '']
 */
export function tokenize(text: string, source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const here = (): TextPosition => ({ line, column: i - lineStart + 1 });
  const fail = (pos: TextPosition, reason: string): never => {
    throw new TextFormatError(source, pos, reason);
  };

  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (isIdentStart(c)) {
      const pos = here();
      const start = i;
      while (i < text.length && isIdentPart(text[i]!)) i++;
      tokens.push({ type: 'identifier', text: text.slice(start, i), pos });
    } else if (isDigit(c) || (c === '.' && isDigit(text[i + 1] ?? ''))) {
      const pos = here();
      const start = i;
      i = scanNumber(text, i);
      const spelled = text.slice(start, i);
      if (i < text.length && isIdentStart(text[i]!))
        fail(here(), `need space between number '${spelled}' and identifier`);
      tokens.push(numberToken(spelled, pos, (reason) => fail(pos, reason)));
    } else if (c === '"' || c === "'") {
      const pos = here();
      const start = i;
      const bytes: number[] = [];
      i++;
      while (true) {
        if (i >= text.length || text[i] === '\n') fail(pos, 'unterminated string literal');
        const ch = text[i]!;
        if (ch === c) {
          i++;
          break;
        }
        if (ch !== '\\') {
          const cp = text.codePointAt(i)!;
          bytes.push(...utf8.encode(String.fromCodePoint(cp)));
          i += cp > 0xffff ? 2 : 1;
          continue;
        }
        const escPos = here();
        i = readEscape(text, i + 1, bytes, () => fail(escPos, `invalid escape sequence '${text.slice(i, i + 2)}'`));
      }
      let value = '';
      try {
        value = strictUtf8.decode(new Uint8Array(bytes));
      } catch {
        fail(pos, 'string literal is not valid UTF-8');
      }
      tokens.push({ type: 'string', text: text.slice(start, i), value, pos });
    } else if (SYMBOLS.has(c)) {
      tokens.push({ type: 'symbol', text: c, pos: here() });
      i++;
    } else {
      fail(here(), `unexpected character '${c}'`);
    }
  }
  tokens.push({ type: 'eof', text: '', pos: here() });
  return tokens;
}

/** Reads the escape after a backslash at `i`, appending its bytes; returns the index after it. */
function readEscape(text: string, i: number, bytes: number[], invalid: () => never): number {
  const e = text[i] ?? '';
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) {
    bytes.push(simple);
    return i + 1;
  }
  if (isOctal(e)) {
    let j = i;
    while (j < i + 3 && isOctal(text[j] ?? '')) j++;
    const value = Number.parseInt(text.slice(i, j), 8);
    if (value > 0xff) invalid();
    bytes.push(value);
    return j;
  }
  if (e === 'x' || e === 'X') {
    let j = i + 1;
    while (j < i + 3 && isHex(text[j] ?? '')) j++;
    if (j === i + 1) invalid();
    bytes.push(Number.parseInt(text.slice(i + 1, j), 16));
    return j;
  }
  if (e === 'u' || e === 'U') {
    const n = e === 'u' ? 4 : 8;
    const hex = text.slice(i + 1, i + 1 + n);
    if (hex.length !== n || ![...hex].every(isHex)) invalid();
    const cp = Number.parseInt(hex, 16);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) invalid();
    bytes.push(...utf8.encode(String.fromCodePoint(cp)));
    return i + 1 + n;
  }
  return invalid();
}

/** Index after the number starting at `i`: hex, octal/decimal integer, or float with optional exponent and `f`. */
function scanNumber(text: string, i: number): number {
  if (text[i] === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
    i += 2;
    while (i < text.length && isHex(text[i]!)) i++;
    return i;
  }
  while (i < text.length && isDigit(text[i]!)) i++;
  if (text[i] === '.') {
    i++;
    while (i < text.length && isDigit(text[i]!)) i++;
  }
  if (text[i] === 'e' || text[i] === 'E') {
    let j = i + 1;
    if (text[j] === '+' || text[j] === '-') j++;
    if (isDigit(text[j] ?? '')) {
      i = j;
      while (i < text.length && isDigit(text[i]!)) i++;
    }
  }
  if (text[i] === 'f' || text[i] === 'F') i++;
  return i;
}

function numberToken(spelled: string, pos: TextPosition, fail: (reason: string) => never): Token {
  if (/^0[xX]/.test(spelled)) {
    if (spelled.length === 2) fail(`'${spelled}' needs hex digits`);
    return { type: 'int', text: spelled, value: BigInt(spelled), pos };
  }
  if (/^[0-9]+$/.test(spelled)) {
    // A leading 0 means octal, as in C and protobuf.
    if (spelled.length > 1 && spelled.startsWith('0')) {
      if (!/^[0-7]+$/.test(spelled)) fail(`invalid octal number '${spelled}'`);
      return { type: 'int', text: spelled, value: BigInt(`0o${spelled.slice(1)}`), pos };
    }
    return { type: 'int', text: spelled, value: BigInt(spelled), pos };
  }
  const body = spelled.replace(/[fF]$/, '');
  const value = Number(body.endsWith('.') ? `${body}0` : body);
  if (Number.isNaN(value)) fail(`invalid number '${spelled}'`);
  return { type: 'float', text: spelled, value, pos };
}
