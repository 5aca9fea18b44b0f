import type { FieldSchema, FieldType, MessageSchema, ScalarType, SchemaRegistry } from '@nvcf/models';
import protobuf from 'protobufjs';

/** Wire variants read and written as their plain counterparts (text format and JSON do not tell them apart). */
const SCALARS: Readonly<Record<string, ScalarType>> = {
  string: 'string',
  bool: 'bool',
  int32: 'int32',
  sint32: 'int32',
  sfixed32: 'int32',
  uint32: 'uint32',
  fixed32: 'uint32',
  int64: 'int64',
  sint64: 'int64',
  sfixed64: 'int64',
  uint64: 'uint64',
  fixed64: 'uint64',
  float: 'float',
  double: 'double',
};

/** `nvidia.inferenceserver.InferRequestHeader.Input` → `InferRequestHeader.Input`: how errors name a message. */
function shortName(type: protobuf.Type): string {
  const parts: string[] = [];
  for (let t: protobuf.NamespaceBase | null = type; t instanceof protobuf.Type; t = t.parent) parts.unshift(t.name);
  return parts.join('.');
}

const keyOf = (type: protobuf.Type) => type.fullName.replace(/^\./, '');

/**
 * Builds the schema tables that `@nvcf/models`' text-format and JSON converters read (`protoFromText`,
 * `protoToText`, `protoFromJson`) from the loaded .proto files, so the wire format and the text/JSON forms come
 * from one definition. Messages are keyed by full name without the leading dot (`nvidia.inferenceserver.ServerStatus`,
 * `inference.ModelConfig`); every message reachable from `roots` is included.
 *
 * @throws Error for a field type the converters cannot represent (bytes): a bug in the caller's choice of roots.
 * @example
 * const schema = schemaFromProtobuf(root, ['nvidia.inferenceserver.RequestStatus']);
 * protoFromText(parseTextFormat('code: SUCCESS'), schema, 'nvidia.inferenceserver.RequestStatus'); // { code: 'SUCCESS' }
 */
export function schemaFromProtobuf(root: protobuf.Root, roots: readonly string[]): SchemaRegistry {
  const out: Record<string, MessageSchema> = {};

  const visit = (type: protobuf.Type): string => {
    const key = keyOf(type);
    if (out[key]) return key;
    const fields: Record<string, FieldSchema> = {};
    out[key] = { name: shortName(type), fields };
    for (const field of type.fieldsArray) {
      field.resolve();
      const schema: FieldSchema = {
        type: fieldType(field, visit),
        label: field.map ? 'map' : field.repeated ? 'repeated' : 'singular',
      };
      if (field instanceof protobuf.MapField) schema.mapKey = scalarOf(field.keyType, field);
      if (field.partOf && !field.options?.proto3_optional) schema.oneof = field.partOf.name;
      fields[field.name] = schema;
    }
    return key;
  };

  for (const name of roots) visit(root.lookupType(name));
  return out;
}

function fieldType(field: protobuf.Field, visit: (t: protobuf.Type) => string): FieldType {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return { kind: 'message', message: visit(resolved) };
  if (resolved instanceof protobuf.Enum) return { kind: 'enum', name: resolved.name, values: { ...resolved.values } };
  return { kind: 'scalar', scalar: scalarOf(field.type, field) };
}

function scalarOf(type: string, field: protobuf.Field): ScalarType {
  const scalar = SCALARS[type];
  if (!scalar) throw new Error(`${field.fullName}: field type '${type}' has no text-format schema here`);
  return scalar;
}
