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
  const source = opts.source ?? '<text>';
  const tokens = tokenize(text, source);
  let at = 0;
  const peek = (): Token => tokens[at]!;
  const next = (): Token => tokens[at++]!;
  const fail = (pos: TextPosition, reason: string): never => {
    throw new TextFormatError(source, pos, reason);
  };
  const isSymbol = (t: Token, s: string) => t.type === 'symbol' && t.text === s;
  const describe = (t: Token) => (t.type === 'eof' ? 'end of input' : `'${t.text}'`);

  function parseFields(msg: TextMessage, close: '}' | '>' | undefined, depth: number): void {
    if (depth > MAX_DEPTH) fail(peek().pos, `messages nested deeper than ${MAX_DEPTH} levels`);
    while (true) {
      const t = peek();
      if (close ? isSymbol(t, close) : t.type === 'eof') return;
      if (t.type === 'eof') fail(t.pos, `expected '${close}' to close the message, found end of input`);
      if (t.type !== 'identifier') fail(t.pos, `expected a field name, found ${describe(t)}`);
      next();
      parseFieldValue(msg, t.text, t.pos, depth);
      const sep = peek();
      if (isSymbol(sep, ',') || isSymbol(sep, ';')) next();
    }
  }

  function parseFieldValue(msg: TextMessage, name: string, namePos: TextPosition, depth: number): void {
    const t = peek();
    const hasColon = isSymbol(t, ':');
    if (hasColon) next();
    const v = peek();
    if (isSymbol(v, '{') || isSymbol(v, '<')) {
      addTextValue(msg, name, parseMessage(depth), { pos: namePos });
    } else if (isSymbol(v, '[')) {
      parseList(msg, name, namePos, hasColon, depth);
    } else if (hasColon) {
      addTextValue(msg, name, parseScalar(name), { pos: namePos });
    } else {
      fail(t.pos, `expected ':' or '{' after field name '${name}'`);
    }
  }

  function parseMessage(depth: number): TextMessage {
    const open = next();
    const msg = emptyTextMessage(open.pos);
    const close = open.text === '{' ? '}' : '>';
    parseFields(msg, close, depth + 1);
    next();
    return msg;
  }

  function parseList(msg: TextMessage, name: string, namePos: TextPosition, hasColon: boolean, depth: number): void {
    next(); // '['
    // `name: []` still records the field (present, zero values), as protobuf accepts it.
    if (!msg.fields.has(name)) msg.fields.set(name, { name, pos: namePos, values: [], listSyntax: true });
    if (isSymbol(peek(), ']')) {
      next();
      msg.fields.get(name)!.listSyntax = true;
      return;
    }
    while (true) {
      const v = peek();
      const value: TextValue =
        isSymbol(v, '{') || isSymbol(v, '<')
          ? parseMessage(depth)
          : hasColon
            ? parseScalar(name)
            : fail(
                v.pos,
                `expected '{' for an element of message list '${name}' (a list of values needs '${name}: [')`,
              );
      addTextValue(msg, name, value, { listSyntax: true });
      const sep = next();
      if (isSymbol(sep, ']')) return;
      if (!isSymbol(sep, ',')) fail(sep.pos, `expected ',' or ']' in the list for '${name}', found ${describe(sep)}`);
    }
  }

  function parseScalar(name: string): TextScalar {
    const t = next();
    if (t.type === 'string') {
      let value = t.value;
      // C-style adjacent literals: "abc" 'def' is one string.
      while (peek().type === 'string') value += (next() as Extract<Token, { type: 'string' }>).value;
      return { kind: 'string', value, pos: t.pos };
    }
    if (t.type === 'int') return { kind: 'int', value: t.value, text: t.text, pos: t.pos };
    if (t.type === 'float') return { kind: 'float', value: t.value, text: t.text, pos: t.pos };
    if (t.type === 'identifier') return { kind: 'identifier', value: t.text, pos: t.pos };
    if (isSymbol(t, '-')) {
      const n = next();
      if (n.type === 'int') return { kind: 'int', value: -n.value, text: `-${n.text}`, pos: t.pos };
      if (n.type === 'float') return { kind: 'float', value: -n.value, text: `-${n.text}`, pos: t.pos };
      if (n.type === 'identifier' && NON_FINITE.has(n.text.toLowerCase())) {
        const value = n.text.toLowerCase() === 'nan' ? Number.NaN : Number.NEGATIVE_INFINITY;
        return { kind: 'float', value, text: `-${n.text}`, pos: t.pos };
      }
      return fail(n.pos, `expected a number after '-', found ${describe(n)}`);
    }
    return fail(t.pos, `expected a value for field '${name}', found ${describe(t)}`);
  }

  const root = emptyTextMessage({ line: 1, column: 1 });
  parseFields(root, undefined, 0);
  return root;
}
