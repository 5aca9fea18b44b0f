import {
  type FieldSchema,
  type ProtoJson,
  type ProtoJsonValue,
  parseTextFormat,
  printTextFormat,
  protoFromJson,
  protoFromText,
  protoToText,
  type SchemaRegistry,
  scalar,
  type TextMessage,
} from '@nvcf/models';
import protobuf from 'protobufjs';
import { schemaFromProtobuf } from './proto-schema-from-protobuf.ts';
import { loadV1Root, V1_MESSAGES, V1_PACKAGE, type V1Message, v1Type } from './v1-protos.ts';

/**
 * Text, binary and JSON forms of the v1 messages, all from `proto/trtis/*.proto`: the text format and JSON through
 * `@nvcf/models`' schema-driven converters (schema derived from the same .proto files), the wire format through
 * protobufjs. Messages are handled in the compact protobuf JSON form (`ProtoJson`: original field names, enums by
 * name, numbers for integers, defaults left out).
 */

let schema: SchemaRegistry | undefined;

/**
 * The text-format schema. Beyond the .proto it accepts `byte_size` in `InferRequestHeader.Input` and `.Output`:
 * pre-1.0 headers (the v1 documentation's own example, `input { name: "input" byte_size: 602112 }`) carry the
 * per-batch-item size there; the infer path reads it as `batch_byte_size / batch_size` and ignores it on outputs.
 */
export function v1Schema(): SchemaRegistry {
  if (!schema) {
    const derived = schemaFromProtobuf(
      loadV1Root(),
      V1_MESSAGES.map((m) => `${V1_PACKAGE}.${m}`),
    );
    const withByteSize = (key: string) => {
      const m = derived[key]!;
      return { ...m, fields: { ...m.fields, byte_size: scalar('uint64') } };
    };
    schema = {
      ...derived,
      [`${V1_PACKAGE}.InferRequestHeader.Input`]: withByteSize(`${V1_PACKAGE}.InferRequestHeader.Input`),
      [`${V1_PACKAGE}.InferRequestHeader.Output`]: withByteSize(`${V1_PACKAGE}.InferRequestHeader.Output`),
    };
  }
  return schema;
}

const key = (type: V1Message) => `${V1_PACKAGE}.${type}`;

/**
 * Parses a v1 message from protobuf text format (an NV-* header, a text body).
 *
 * @param source names the input in errors: `NV-InferRequest:1:12: unknown field 'foo' in InferRequestHeader`.
 * @throws TextFormatError (INVALID_ARGUMENT) for bad syntax or a value that does not fit the message.
 * @example
 * parseV1Text('InferRequestHeader', 'batch_size: 1 input { name: "INPUT0" }', 'NV-InferRequest');
 * // { batch_size: 1, input: [{ name: 'INPUT0' }] }
 */
export function parseV1Text(type: V1Message, text: string, source: string): ProtoJson {
  return protoFromText(parseTextFormat(text, { source }), v1Schema(), key(type), source);
}

export interface V1TextOptions {
  /** One line, ASCII only (protobuf's ShortDebugString): the NV-* header form. Default: DebugString's lines. */
  singleLine?: boolean;
}

/**
 * Prints a v1 message in text format, fields in declaration order, repeated fields by repetition
 * (`dims: 16 dims: 16`), maps as `{ key: … value { … } }` entries, defaults left out, as protobuf's
 * DebugString / ShortDebugString print them.
 *
 * @example
 * printV1Text('RequestStatus', { code: 'SUCCESS', server_id: 'inference:0', request_id: 7 }, { singleLine: true });
 * // 'code: SUCCESS server_id: "inference:0" request_id: 7'
 */
export function printV1Text(type: V1Message, proto: object, opts: V1TextOptions = {}): string {
  const tree = protoToText(compactV1(type, proto), v1Schema(), key(type));
  repeatFields(tree);
  const singleLine = opts.singleLine ?? false;
  return printTextFormat(tree, { singleLine, asciiOnly: singleLine });
}

/** Serializes a v1 message in the protobuf wire format. */
export function encodeV1(type: V1Message, proto: object): Uint8Array {
  const t = v1Type(type);
  return t.encode(t.fromObject(compactV1(type, proto))).finish();
}

/**
 * Parses a v1 message from the wire format into the compact form.
 *
 * @throws Error from protobufjs for bytes that are not the message; ModelConfigError for a 64-bit value
 *   beyond 2^53 (refused rather than rounded).
 */
export function decodeV1(type: V1Message, bytes: Uint8Array): ProtoJson {
  return compactFromDecoded(type, v1Type(type).decode(bytes));
}

/** A message protobufjs decoded (e.g. the `meta_data` of a gRPC InferRequest) in the compact form. */
export function compactFromDecoded(type: V1Message, message: protobuf.Message): ProtoJson {
  const t = v1Type(type);
  const plain = t.toObject(message, { longs: String, enums: String });
  return protoFromJson(decimalMapKeys(t, plain), v1Schema(), key(type));
}

/**
 * The proto3 JSON form (`?format=json`): original field names, enums by name, 64-bit integers as strings,
 * non-finite floats as "NaN"/"Infinity", defaults left out.
 */
export function v1Json(type: V1Message, proto: object): Record<string, unknown> {
  const t = v1Type(type);
  return t.toObject(t.fromObject(compactV1(type, proto)), { longs: String, enums: String, json: true });
}

/** The printer uses list syntax where the tree says so; protobuf's DebugString repeats the field instead. */
function repeatFields(msg: TextMessage): void {
  for (const field of msg.fields.values()) {
    field.listSyntax = false;
    for (const v of field.values) if (v.kind === 'message') repeatFields(v);
  }
}

/**
 * protobufjs decodes 64-bit map keys as 8-character "long hash" strings; the schema converters (and every
 * reader) expect decimal keys, as protobuf's own JSON and text forms write them.
 */
function decimalMapKeys(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  for (const field of type.fieldsArray) {
    const value = obj[field.name];
    if (value === undefined || value === null) continue;
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    const fix = (v: unknown) => (sub ? decimalMapKeys(sub, v as Record<string, unknown>) : v);
    if (field instanceof protobuf.MapField) {
      const wide = ['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'].includes(field.keyType);
      const unsigned = field.keyType === 'uint64' || field.keyType === 'fixed64';
      obj[field.name] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          wide && k.length === 8 ? String(protobuf.util.LongBits.fromHash(k).toLong(unsigned)) : k,
          fix(v),
        ]),
      );
    } else if (Array.isArray(value)) {
      obj[field.name] = value.map(fix);
    } else {
      obj[field.name] = fix(value);
    }
  }
  return obj;
}

/**
 * Drops what proto3 does not serialize (scalars and enums at their default, empty repeated fields and maps,
 * undefined), so a message built with plain object literals prints like protobuf's own. No validation: the
 * server builds these messages, and its counters may pass 2^53 (which `protoFromJson` would refuse).
 */
export function compactV1(type: V1Message, proto: object): ProtoJson {
  return compactMessage(proto as ProtoJson, key(type), v1Schema());
}

function compactMessage(proto: ProtoJson, name: string, registry: SchemaRegistry): ProtoJson {
  const fields = registry[name]?.fields;
  if (!fields) throw new Error(`v1 schema has no message '${name}'`);
  const out: ProtoJson = {};
  for (const [field, value] of Object.entries(proto)) {
    const fs = fields[field];
    if (value === undefined || value === null || !fs) continue;
    if (fs.label === 'repeated') {
      const values = (value as ProtoJsonValue[]).map((v) => compactValue(v, fs, registry));
      if (values.length) out[field] = values;
    } else if (fs.label === 'map') {
      const entries = Object.entries(value as ProtoJson).map(([k, v]) => [k, compactValue(v, fs, registry)]);
      if (entries.length) out[field] = Object.fromEntries(entries);
    } else if (fs.oneof || fs.type.kind === 'message' || !isDefault(value, fs)) {
      out[field] = compactValue(value, fs, registry);
    }
  }
  return out;
}

function compactValue(v: ProtoJsonValue, fs: FieldSchema, registry: SchemaRegistry): ProtoJsonValue {
  return fs.type.kind === 'message' ? compactMessage(v as ProtoJson, fs.type.message, registry) : v;
}

function isDefault(value: ProtoJsonValue, fs: FieldSchema): boolean {
  if (fs.type.kind === 'enum') return fs.type.values[value as string] === 0;
  return value === 0 || value === '' || value === false;
}
