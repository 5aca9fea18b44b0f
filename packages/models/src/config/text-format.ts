import { type Token, tokenize } from './text-format-lexer.ts';
import {
  addTextValue,
  emptyTextMessage,
  TextFormatError,
  type TextMessage,
  type TextPosition,
  type TextScalar,
  type TextValue,
} from './text-format-tree.ts';

export { printTextFormat, type TextPrintOptions } from './text-format-print.ts';
export * from './text-format-tree.ts';

export interface TextParseOptions {
  /** Names the input in error messages (`config.pbtxt:3:7: ...`). Default `'<text>'`. */
  source?: string;
}

// protobuf's parser refuses deeper nesting too; a hostile NV-InferRequest header must not overflow the stack.
const MAX_DEPTH = 100;
const NON_FINITE = new Set(['inf', 'infinity', 'nan']);

/**
 * Parses protobuf text format (the subset Triton uses) into a schema-free tree: `name: value`, `name { ... }`,
 * `name: { ... }`, `name < ... >`, repeated fields by repetition or `[ a, b ]`, strings in either quote with C
 * escapes and adjacent-literal concatenation, `#` comments, optional `,`/`;` after each field. Map fields are just
 * repeated `{ key: ... value: ... }` messages here; a schema layer gives them meaning.
 *
 * @throws TextFormatError with `<source>:<line>:<column>: <reason>`.
 * @example
 * const tree = parseTextFormat('max_batch_size: 8\ninput [{ name: "INPUT0" dims: [16] }]', { source: 'config.pbtxt' });
 * tree.fields.get('max_batch_size')?.values[0]; // { kind: 'int', value: 8n, text: '8', pos: { line: 1, column: 17 } }
 */
export function parseTextFormat(text: string, opts: TextParseOptions = {}): TextMessage {
  return new TextFormatParser(text, opts.source ?? '<text>').parse();
}

/** A recursive-descent parser over one input's tokens. */
class TextFormatParser {
  readonly #source: string;
  readonly #tokens: Token[];
  #at = 0;

  constructor(text: string, source: string) {
    this.#source = source;
    this.#tokens = tokenize(text, source);
  }

  parse(): TextMessage {
    const root = emptyTextMessage({ line: 1, column: 1 });
    this.#fields(root, undefined, 0);
    return root;
  }

  #peek(): Token {
    return this.#tokens[this.#at]!;
  }

  #next(): Token {
    return this.#tokens[this.#at++]!;
  }

  #fail(pos: TextPosition, reason: string): never {
    throw new TextFormatError(this.#source, pos, reason);
  }

  #fields(msg: TextMessage, close: '}' | '>' | undefined, depth: number): void {
    if (depth > MAX_DEPTH) this.#fail(this.#peek().pos, `messages nested deeper than ${MAX_DEPTH} levels`);
    while (true) {
      const t = this.#peek();
      if (close ? isSymbol(t, close) : t.type === 'eof') return;
      if (t.type === 'eof') this.#fail(t.pos, `expected '${close}' to close the message, found end of input`);
      if (t.type !== 'identifier') this.#fail(t.pos, `expected a field name, found ${describe(t)}`);
      this.#next();
      this.#fieldValue(msg, t.text, t.pos, depth);
      const sep = this.#peek();
      if (isSymbol(sep, ',') || isSymbol(sep, ';')) this.#next();
    }
  }

  #fieldValue(msg: TextMessage, name: string, namePos: TextPosition, depth: number): void {
    const t = this.#peek();
    const hasColon = isSymbol(t, ':');
    if (hasColon) this.#next();
    const v = this.#peek();
    if (isSymbol(v, '{') || isSymbol(v, '<')) {
      addTextValue(msg, name, this.#message(depth), { pos: namePos });
    } else if (isSymbol(v, '[')) {
      this.#list(msg, name, namePos, hasColon, depth);
    } else if (hasColon) {
      addTextValue(msg, name, this.#scalar(name), { pos: namePos });
    } else {
      this.#fail(t.pos, `expected ':' or '{' after field name '${name}'`);
    }
  }

  #message(depth: number): TextMessage {
    const open = this.#next();
    const msg = emptyTextMessage(open.pos);
    const close = open.text === '{' ? '}' : '>';
    this.#fields(msg, close, depth + 1);
    this.#next();
    return msg;
  }

  #list(msg: TextMessage, name: string, namePos: TextPosition, hasColon: boolean, depth: number): void {
    this.#next(); // '['
    // `name: []` still records the field (present, zero values), as protobuf accepts it.
    if (!msg.fields.has(name)) msg.fields.set(name, { name, pos: namePos, values: [], listSyntax: true });
    if (isSymbol(this.#peek(), ']')) {
      this.#next();
      msg.fields.get(name)!.listSyntax = true;
      return;
    }
    while (true) {
      const v = this.#peek();
      const value: TextValue =
        isSymbol(v, '{') || isSymbol(v, '<')
          ? this.#message(depth)
          : hasColon
            ? this.#scalar(name)
            : this.#fail(
                v.pos,
                `expected '{' for an element of message list '${name}' (a list of values needs '${name}: [')`,
              );
      addTextValue(msg, name, value, { listSyntax: true });
      const sep = this.#next();
      if (isSymbol(sep, ']')) return;
      if (!isSymbol(sep, ',')) {
        this.#fail(sep.pos, `expected ',' or ']' in the list for '${name}', found ${describe(sep)}`);
      }
    }
  }

  #scalar(name: string): TextScalar {
    const t = this.#next();
    if (t.type === 'string') {
      let value = t.value;
      // C-style adjacent literals: "abc" 'def' is one string.
      while (this.#peek().type === 'string') value += (this.#next() as Extract<Token, { type: 'string' }>).value;
      return { kind: 'string', value, pos: t.pos };
    }
    if (t.type === 'int') return { kind: 'int', value: t.value, text: t.text, pos: t.pos };
    if (t.type === 'float') return { kind: 'float', value: t.value, text: t.text, pos: t.pos };
    if (t.type === 'identifier') return { kind: 'identifier', value: t.text, pos: t.pos };
    if (isSymbol(t, '-')) return this.#negative(t.pos);
    return this.#fail(t.pos, `expected a value for field '${name}', found ${describe(t)}`);
  }

  /** A number after '-' (`-inf` and `-nan` included). */
  #negative(pos: TextPosition): TextScalar {
    const n = this.#next();
    if (n.type === 'int') return { kind: 'int', value: -n.value, text: `-${n.text}`, pos };
    if (n.type === 'float') return { kind: 'float', value: -n.value, text: `-${n.text}`, pos };
    if (n.type === 'identifier' && NON_FINITE.has(n.text.toLowerCase())) {
      const value = n.text.toLowerCase() === 'nan' ? Number.NaN : Number.NEGATIVE_INFINITY;
      return { kind: 'float', value, text: `-${n.text}`, pos };
    }
    return this.#fail(n.pos, `expected a number after '-', found ${describe(n)}`);
  }
}

const isSymbol = (t: Token, s: string) => t.type === 'symbol' && t.text === s;
const describe = (t: Token) => (t.type === 'eof' ? 'end of input' : `'${t.text}'`);
