import type { TextField, TextMessage, TextValue } from './text-format-tree.ts';

export interface TextPrintOptions {
  /**
   * One line, fields separated by single spaces: protobuf's ShortDebugString, the form NV-* headers carry.
   * Default: one field per line, 2-space indent (DebugString / config.pbtxt).
   */
  singleLine?: boolean;
  /** Escape every non-ASCII byte as octal (HTTP header values must be ASCII). Default false: UTF-8 as is. */
  asciiOnly?: boolean;
}

const utf8 = new TextEncoder();
const ESCAPES: Record<number, string> = { 10: '\\n', 13: '\\r', 9: '\\t', 34: '\\"', 39: "\\'", 92: '\\\\' };

/**
 * Quotes a string for text format: double quotes, C escapes, other control bytes as 3-digit octal.
 *
 * @example
 * quoteTextString('a"b\n'); // '"a\\"b\\n"'
 */
export function quoteTextString(value: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    const escaped = ESCAPES[cp];
    if (escaped) out += escaped;
    else if (cp < 0x20 || cp === 0x7f) out += octal(cp);
    else if (cp > 0x7f && asciiOnly) for (const b of utf8.encode(ch)) out += octal(b);
    else out += ch;
  }
  return `${out}"`;
}

const octal = (b: number) => `\\${b.toString(8).padStart(3, '0')}`;

function formatFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (v === Number.POSITIVE_INFINITY) return 'inf';
  if (v === Number.NEGATIVE_INFINITY) return '-inf';
  return String(v);
}

function formatScalar(v: Exclude<TextValue, TextMessage>, asciiOnly: boolean): string {
  switch (v.kind) {
    case 'string':
      return quoteTextString(v.value, asciiOnly);
    case 'int':
      return v.value.toString();
    case 'float':
      return formatFloat(v.value);
    case 'identifier':
      return v.value;
  }
}

/**
 * Prints a tree as canonical text format. Fields print in tree order; a field whose values came from (or were
 * built with) list syntax prints as `dims: [ 16, -1 ]` / `input [ { ... }, { ... } ]`, any other repeated field by
 * repetition, as protobuf does.
 *
 * @example
 * printTextFormat(parseTextFormat('dims: [16,-1] name:"x"')); // 'dims: [ 16, -1 ]\nname: "x"\n'
 */
export function printTextFormat(msg: TextMessage, opts: TextPrintOptions = {}): string {
  const asciiOnly = opts.asciiOnly ?? false;
  if (opts.singleLine) return singleLine(msg, asciiOnly);
  const lines: string[] = [];
  multiLine(msg, '', lines, asciiOnly);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function multiLine(msg: TextMessage, indent: string, lines: string[], asciiOnly: boolean): void {
  const inner = `${indent}  `;
  for (const field of msg.fields.values()) {
    if (listForm(field)) {
      if (!isMessageField(field)) {
        const items = field.values.map((v) => formatScalar(v as Exclude<TextValue, TextMessage>, asciiOnly));
        lines.push(`${indent}${field.name}: [${items.length ? ` ${items.join(', ')} ` : ''}]`);
        continue;
      }
      lines.push(`${indent}${field.name} [`);
      field.values.forEach((v, i) => {
        lines.push(`${inner}{`);
        multiLine(v as TextMessage, `${inner}  `, lines, asciiOnly);
        lines.push(`${inner}}${i < field.values.length - 1 ? ',' : ''}`);
      });
      lines.push(`${indent}]`);
      continue;
    }
    for (const v of field.values) {
      if (v.kind !== 'message') {
        lines.push(`${indent}${field.name}: ${formatScalar(v, asciiOnly)}`);
        continue;
      }
      lines.push(`${indent}${field.name} {`);
      multiLine(v, inner, lines, asciiOnly);
      lines.push(`${indent}}`);
    }
  }
}

function singleLine(msg: TextMessage, asciiOnly: boolean): string {
  const parts: string[] = [];
  const body = (m: TextMessage) => {
    const s = singleLine(m, asciiOnly);
    return s ? `{ ${s} }` : '{ }';
  };
  for (const field of msg.fields.values()) {
    if (listForm(field)) {
      const items = field.values.map((v) => (v.kind === 'message' ? body(v) : formatScalar(v, asciiOnly)));
      const colon = isMessageField(field) ? '' : ':';
      parts.push(`${field.name}${colon} [${items.length ? ` ${items.join(', ')} ` : ''}]`);
      continue;
    }
    for (const v of field.values) {
      parts.push(v.kind === 'message' ? `${field.name} ${body(v)}` : `${field.name}: ${formatScalar(v, asciiOnly)}`);
    }
  }
  return parts.join(' ');
}

/** An empty list has no values to tell; it prints as a scalar list (`name: []`), which protobuf accepts for both. */
const isMessageField = (field: TextField) => field.values.length > 0 && field.values[0]!.kind === 'message';

/** List syntax only when asked for and the values agree on being messages or scalars (a hand-built mix repeats). */
function listForm(field: TextField): boolean {
  if (!field.listSyntax) return false;
  const messages = field.values.filter((v) => v.kind === 'message').length;
  return messages === 0 || messages === field.values.length;
}
