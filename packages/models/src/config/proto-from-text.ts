import {
  checkInteger,
  defaultValue,
  describeType,
  type FieldSchema,
  isIntegerType,
  type MessageSchema,
  type ProtoJson,
  type ProtoJsonValue,
  type ScalarType,
  type SchemaRegistry,
} from './proto-schema.ts';
import { TextFormatError, type TextMessage, type TextPosition, type TextValue } from './text-format-tree.ts';

/**
 * Reads a parsed text-format tree against a schema into compact protobuf JSON (see {@link ProtoJson}), with the
 * rules protobuf's TextFormat parser applies: unknown fields, a non-repeated field given twice and two members of
 * one oneof are errors; bools accept `true/True/t/1`; enums accept names or numbers; floats accept `inf`/`nan`.
 * Errors carry the source position of the offending field or value.
 *
 * @example
 * protoFromText(parseTextFormat('max_batch_size: 8'), MODEL_CONFIG_SCHEMA, 'ModelConfig'); // { max_batch_size: 8 }
 */
export function protoFromText(
  tree: TextMessage,
  schemas: SchemaRegistry,
  messageName: string,
  source = '<text>',
): ProtoJson {
  const fail = (pos: TextPosition, reason: string): never => {
    throw new TextFormatError(source, pos, reason);
  };

  function readMessage(msg: TextMessage, schemaName: string): ProtoJson {
    const schema = schemas[schemaName];
    if (!schema) throw new Error(`schema has no message '${schemaName}'`);
    const out: ProtoJson = {};
    const oneofs = new Map<string, string>();
    for (const field of msg.fields.values()) {
      const fs = schema.fields[field.name];
      if (!fs) return fail(field.pos, `unknown field '${field.name}' in ${schema.name}`);
      if (fs.oneof) {
        const other = oneofs.get(fs.oneof);
        if (other)
          fail(
            field.pos,
            `'${field.name}' and '${other}' are both set in ${schema.name}, but only one of oneof '${fs.oneof}' may be`,
          );
        oneofs.set(fs.oneof, field.name);
      }
      if (fs.label === 'singular') {
        if (field.listSyntax)
          fail(field.pos, `field '${field.name}' in ${schema.name} is not repeated; a list is not allowed`);
        if (field.values.length > 1) {
          fail(
            field.values[1]!.pos,
            `field '${field.name}' is set more than once in ${schema.name} (it is not repeated)`,
          );
        }
        const value = readValue(field.values[0]!, fs, field.name, schema);
        if (keep(value, fs)) out[field.name] = value;
      } else if (fs.label === 'repeated') {
        if (field.values.length) out[field.name] = field.values.map((v) => readValue(v, fs, field.name, schema));
      } else {
        const map = readMap(field.values, fs, field.name, schema);
        if (Object.keys(map).length) out[field.name] = map;
      }
    }
    return out;
  }

  function readMap(values: TextValue[], fs: FieldSchema, name: string, owner: MessageSchema): ProtoJson {
    const out: ProtoJson = {};
    for (const entry of values) {
      if (entry.kind !== 'message')
        return fail(entry.pos, `map field '${name}' expects entries like { key: ... value: ... }`);
      for (const f of entry.fields.values()) {
        if (f.name !== 'key' && f.name !== 'value')
          fail(f.pos, `unknown field '${f.name}' in a map entry of '${name}'`);
        if (f.values.length !== 1) fail(f.pos, `a map entry of '${name}' needs exactly one '${f.name}'`);
      }
      const keyNode = entry.fields.get('key')?.values[0];
      const keySchema: FieldSchema = { type: { kind: 'scalar', scalar: fs.mapKey! }, label: 'singular' };
      const key = keyNode ? readValue(keyNode, keySchema, `${name}.key`, owner) : defaultValue(keySchema.type);
      const valueNode = entry.fields.get('value')?.values[0];
      const valueSchema: FieldSchema = { type: fs.type, label: 'singular' };
      const fallback = fs.type.kind === 'message' ? {} : defaultValue(fs.type);
      // Later entries win, as protobuf's parser does for a repeated key.
      out[String(key)] = valueNode ? readValue(valueNode, valueSchema, `${name}.value`, owner) : fallback;
    }
    return out;
  }

  function readValue(v: TextValue, fs: FieldSchema, name: string, owner: MessageSchema): ProtoJsonValue {
    const type = fs.type;
    if (type.kind === 'message') {
      if (v.kind !== 'message')
        return fail(v.pos, `field '${name}' in ${owner.name} is a message: write '${name} { ... }'`);
      return readMessage(v, type.message);
    }
    if (v.kind === 'message')
      return fail(v.pos, `field '${name}' in ${owner.name} expects ${describeType(fs)}, found a message`);
    const wrong = (): never =>
      fail(v.pos, `field '${name}' in ${owner.name} expects ${describeType(fs)}, found ${describe(v)}`);
    if (type.kind === 'enum') {
      if (v.kind === 'identifier' && v.value in type.values) return v.value;
      if (v.kind === 'int') {
        const hit = Object.entries(type.values).find(([, n]) => BigInt(n) === v.value);
        if (hit) return hit[0];
      }
      const names = Object.keys(type.values).join(', ');
      return fail(v.pos, `unknown value ${describe(v)} for field '${name}' in ${owner.name} (${type.name}: ${names})`);
    }
    return readScalar(v, type.scalar, wrong, (reason) => fail(v.pos, `field '${name}' in ${owner.name}: ${reason}`));
  }

  return readMessage(tree, messageName);
}

const TRUE = new Set(['true', 'True', 't']);
const FALSE = new Set(['false', 'False', 'f']);

function readScalar(
  v: Exclude<TextValue, TextMessage>,
  scalar: ScalarType,
  wrong: () => never,
  fail: (reason: string) => never,
): ProtoJsonValue {
  if (scalar === 'string') return v.kind === 'string' ? v.value : wrong();
  if (scalar === 'bool') {
    if (v.kind === 'identifier' && TRUE.has(v.value)) return true;
    if (v.kind === 'identifier' && FALSE.has(v.value)) return false;
    if (v.kind === 'int' && (v.value === 0n || v.value === 1n)) return v.value === 1n;
    return wrong();
  }
  if (isIntegerType(scalar)) {
    if (v.kind !== 'int') return wrong();
    const n = checkInteger(v.value, scalar);
    return typeof n === 'number' ? n : fail(n.reason);
  }
  if (v.kind === 'int') return Number(v.value);
  if (v.kind === 'float') return v.value;
  if (v.kind === 'identifier') {
    const lower = v.value.toLowerCase();
    if (lower === 'inf' || lower === 'infinity') return Number.POSITIVE_INFINITY;
    if (lower === 'nan') return Number.NaN;
  }
  return wrong();
}

function describe(v: Exclude<TextValue, TextMessage>): string {
  if (v.kind === 'string') return `string ${JSON.stringify(v.value)}`;
  if (v.kind === 'identifier') return `'${v.value}'`;
  return v.text;
}

/** proto3 drops singular scalars at their default; a oneof member keeps presence whatever its value. */
export function keep(value: ProtoJsonValue, fs: FieldSchema): boolean {
  if (fs.oneof || fs.type.kind === 'message') return true;
  return value !== defaultValue(fs.type);
}
