import { AppError } from '@nvcf/protocol';

/**
 * The generic tree that protobuf text format parses to, with no schema: a message is an ordered map from field
 * name to the values written for it. The same tree serves config.pbtxt (through the ModelConfig schema) and the
 * legacy Triton v1 API (NV-InferRequest / NV-Status headers, ServerStatus text), so nothing here knows a message type.
 */

/** 1-based line and column (in UTF-16 code units, as editors count them). */
export interface TextPosition {
  line: number;
  column: number;
}

export type TextScalar =
  | { kind: 'string'; value: string; pos: TextPosition }
  /** `text` keeps the source spelling (`0x10`, `-7`); `value` is exact, so 64-bit ids survive. */
  | { kind: 'int'; value: bigint; text: string; pos: TextPosition }
  | { kind: 'float'; value: number; text: string; pos: TextPosition }
  /** `true`, `false`, enum names, and unsigned `inf`/`nan` (only a schema knows whether a field is a float). */
  | { kind: 'identifier'; value: string; pos: TextPosition };

export interface TextMessage {
  kind: 'message';
  fields: Map<string, TextField>;
  pos: TextPosition;
}

export type TextValue = TextScalar | TextMessage;

/** Every value written for one field name, in source order, whether by repetition or list syntax. */
export interface TextField {
  name: string;
  /** Where the field name first appears. */
  pos: TextPosition;
  values: TextValue[];
  /** True if any value came from `[ ... ]`; the printer uses it to choose list syntax. */
  listSyntax: boolean;
}

/**
 * A text-format input that cannot be read: bad syntax, or (from a schema layer) a value that does not fit.
 * The message reads `<source>:<line>:<column>: <reason>`, the form compilers use, so editors can jump to it.
 * An INVALID_ARGUMENT AppError: a v1 NV-InferRequest that does not parse is the client's fault (400).
 *
 * @example
 * try { parseTextFormat('dims 16', { source: 'config.pbtxt' }); }
 * catch (err) { (err as TextFormatError).message; } // "config.pbtxt:1:6: expected ':' or '{' after field name 'dims'"
 */
export class TextFormatError extends AppError {
  readonly source: string;
  readonly line: number;
  readonly column: number;
  readonly reason: string;

  constructor(source: string, pos: TextPosition, reason: string) {
    super('INVALID_ARGUMENT', `${source}:${pos.line}:${pos.column}: ${reason}`);
    this.name = 'TextFormatError';
    this.source = source;
    this.line = pos.line;
    this.column = pos.column;
    this.reason = reason;
  }
}

const NO_POSITION: TextPosition = { line: 0, column: 0 };

/** Marks a string as an enum name when building a tree by hand (a bare string builds a quoted string). */
export interface TextEnum {
  readonly enumName: string;
}

/**
 * Wraps an enum value name for {@link buildTextMessage}.
 *
 * @example
 * buildTextMessage({ code: textEnum('SUCCESS') }); // prints `code: SUCCESS`
 */
export function textEnum(name: string): TextEnum {
  return { enumName: name };
}

export type TextInputValue = string | number | bigint | boolean | TextEnum | TextMessage | TextInput;
export interface TextInput {
  [field: string]: TextInputValue | readonly TextInputValue[] | undefined;
}

function isTextEnum(v: unknown): v is TextEnum {
  return typeof v === 'object' && v !== null && 'enumName' in v;
}

function buildValue(v: TextInputValue): TextValue {
  const pos = NO_POSITION;
  if (typeof v === 'string') return { kind: 'string', value: v, pos };
  if (typeof v === 'boolean') return { kind: 'identifier', value: v ? 'true' : 'false', pos };
  if (typeof v === 'bigint') return { kind: 'int', value: v, text: v.toString(), pos };
  if (typeof v === 'number') {
    return Number.isSafeInteger(v)
      ? { kind: 'int', value: BigInt(v), text: String(v), pos }
      : { kind: 'float', value: v, text: String(v), pos };
  }
  if (isTextEnum(v)) return { kind: 'identifier', value: v.enumName, pos };
  if ((v as TextMessage).kind === 'message' && (v as TextMessage).fields instanceof Map) return v as TextMessage;
  return buildTextMessage(v as TextInput);
}

/**
 * Builds a tree from a plain object, for callers that print text format (v1 headers, status bodies).
 * Arrays become repeated fields; `undefined` fields are left out; strings are quoted, {@link textEnum} is not.
 *
 * @example
 * printTextFormat(buildTextMessage({ code: textEnum('SUCCESS'), server_id: 'inference:0', request_id: 7n }),
 *   { singleLine: true });
 * // 'code: SUCCESS server_id: "inference:0" request_id: 7'
 */
export function buildTextMessage(input: TextInput): TextMessage {
  const msg = emptyTextMessage();
  for (const [name, raw] of Object.entries(input)) {
    if (raw === undefined) continue;
    const list = Array.isArray(raw) ? (raw as readonly TextInputValue[]) : [raw as TextInputValue];
    for (const v of list) addTextValue(msg, name, buildValue(v));
  }
  return msg;
}

/**
 * A message with no fields, to fill with {@link addTextValue}.
 *
 * @example
 * const msg = emptyTextMessage();
 * addTextValue(msg, 'dims', { kind: 'int', value: 16n, text: '16', pos: msg.pos }, { listSyntax: true });
 * printTextFormat(msg); // 'dims: [ 16 ]\n'
 */
export function emptyTextMessage(pos: TextPosition = NO_POSITION): TextMessage {
  return { kind: 'message', fields: new Map(), pos };
}

/**
 * Appends one value to a field, creating the field on first use (fields keep first-appearance order).
 *
 * @example
 * addTextValue(msg, 'name', { kind: 'string', value: 'INPUT0', pos: msg.pos });
 */
export function addTextValue(
  msg: TextMessage,
  name: string,
  value: TextValue,
  opts: { pos?: TextPosition; listSyntax?: boolean } = {},
): TextField {
  let field = msg.fields.get(name);
  if (!field) {
    field = { name, pos: opts.pos ?? value.pos, values: [], listSyntax: false };
    msg.fields.set(name, field);
  }
  field.values.push(value);
  if (opts.listSyntax) field.listSyntax = true;
  return field;
}
