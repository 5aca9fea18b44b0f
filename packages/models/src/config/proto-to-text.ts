import type { FieldSchema, ProtoJson, ProtoJsonValue, SchemaRegistry } from './proto-schema.ts';
import { addTextValue, emptyTextMessage, type TextMessage, type TextValue } from './text-format-tree.ts';

const AT = { line: 0, column: 0 };

/**
 * Turns compact protobuf JSON into a text-format tree, in schema (declaration) order. Repeated fields get list
 * syntax (`dims: [ 16 ]`, `input [ { ... } ]`), the style of Triton's own config.pbtxt files; maps print as
 * repeated `{ key: ... value: ... }` entries; enums print unquoted because the schema says they are enums.
 *
 * @example
 * printTextFormat(protoToText({ max_batch_size: 8 }, MODEL_CONFIG_SCHEMA, 'ModelConfig')); // 'max_batch_size: 8\n'
 */
export function protoToText(proto: ProtoJson, schemas: SchemaRegistry, messageName: string): TextMessage {
  const schema = schemas[messageName];
  if (!schema) throw new Error(`schema has no message '${messageName}'`);
  const msg = emptyTextMessage();
  for (const [name, fs] of Object.entries(schema.fields)) {
    const value = proto[name];
    if (value === undefined) continue;
    if (fs.label === 'repeated') {
      const values = value as ProtoJsonValue[];
      if (!values.length) continue;
      for (const v of values) addTextValue(msg, name, toNode(v, fs, schemas), { listSyntax: true });
    } else if (fs.label === 'map') {
      for (const [k, v] of Object.entries(value as ProtoJson)) {
        const entry = emptyTextMessage();
        const key: FieldSchema = { type: { kind: 'scalar', scalar: fs.mapKey! }, label: 'singular' };
        addTextValue(entry, 'key', toNode(mapKeyValue(k, fs), key, schemas));
        addTextValue(entry, 'value', toNode(v, fs, schemas));
        addTextValue(msg, name, entry);
      }
    } else {
      addTextValue(msg, name, toNode(value, fs, schemas));
    }
  }
  return msg;
}

function toNode(v: ProtoJsonValue, fs: FieldSchema, schemas: SchemaRegistry): TextValue {
  const type = fs.type;
  if (type.kind === 'message') return protoToText(v as ProtoJson, schemas, type.message);
  if (type.kind === 'enum') return { kind: 'identifier', value: String(v), pos: AT };
  if (typeof v === 'string') return { kind: 'string', value: v, pos: AT };
  if (typeof v === 'boolean') return { kind: 'identifier', value: v ? 'true' : 'false', pos: AT };
  const n = v as number;
  const isInt = type.scalar !== 'float' && type.scalar !== 'double';
  return isInt
    ? { kind: 'int', value: BigInt(n), text: String(n), pos: AT }
    : { kind: 'float', value: n, text: String(n), pos: AT };
}

function mapKeyValue(key: string, fs: FieldSchema): ProtoJsonValue {
  if (fs.mapKey === 'string') return key;
  if (fs.mapKey === 'bool') return key === 'true';
  return Number(key);
}
