import { keep } from './proto-from-text.ts';
import {
  checkInteger,
  describeType,
  type FieldSchema,
  isIntegerType,
  jsonName,
  type MessageSchema,
  ModelConfigError,
  type ProtoJson,
  type ProtoJsonValue,
  type ScalarType,
  type SchemaRegistry,
} from './proto-schema.ts';

/**
 * Reads protobuf JSON against a schema into the compact form, accepting what protobuf's JSON parser accepts:
 * original or lowerCamelCase field names, `null` for "default", enums by name or number, and integers as
 * numbers or decimal strings (proto3 JSON writes 64-bit integers as strings; Triton clients send
 * `{"max_batch_size":"16"}`). Errors name the path: `input[0].dims[1]: expected an integer (int64), got "x"`.
 *
 * @example
 * protoFromJson({ maxBatchSize: '16' }, MODEL_CONFIG_SCHEMA, 'ModelConfig'); // { max_batch_size: 16 }
 */
export function protoFromJson(json: unknown, schemas: SchemaRegistry, messageName: string): ProtoJson {
  return readMessage(json, schemas, messageName, '');
}

const fail = (path: string, reason: string): never => {
  throw new ModelConfigError(path ? `${path}: ${reason}` : reason);
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const got = (v: unknown) => (Array.isArray(v) ? 'an array' : v === null ? 'null' : JSON.stringify(v));

function readMessage(json: unknown, schemas: SchemaRegistry, schemaName: string, path: string): ProtoJson {
  const schema = schemas[schemaName];
  if (!schema) throw new Error(`schema has no message '${schemaName}'`);
  if (!isObject(json)) return fail(path, `expected a JSON object for ${schema.name}, got ${got(json)}`);
  const out: ProtoJson = {};
  const oneofs = new Map<string, string>();
  const seen = new Set<string>();
  for (const [key, value] of Object.entries(json)) {
    if (isOneofDiscriminator(schema, key, value)) continue;
    const name = resolveName(schema, key);
    if (!name) return fail(path, `unknown field '${key}' in ${schema.name}`);
    if (seen.has(name))
      fail(path, `field '${name}' is given twice in ${schema.name} (as '${name}' and '${jsonName(name)}')`);
    seen.add(name);
    const fs = schema.fields[name]!;
    const at = path ? `${path}.${name}` : name;
    // null means "default" in protobuf JSON; undefined is what a JS object holding no value looks like.
    if (value === null || value === undefined) continue;
    if (fs.oneof) {
      const other = oneofs.get(fs.oneof);
      if (other)
        fail(
          path,
          `'${name}' and '${other}' are both set in ${schema.name}, but only one of oneof '${fs.oneof}' may be`,
        );
      oneofs.set(fs.oneof, name);
    }
    if (fs.label === 'repeated') {
      if (!Array.isArray(value)) return fail(at, `expected an array, got ${got(value)}`);
      if (value.length) out[name] = value.map((v, i) => readValue(v, fs, schemas, `${at}[${i}]`));
    } else if (fs.label === 'map') {
      if (!isObject(value)) return fail(at, `expected a JSON object (map), got ${got(value)}`);
      const map: ProtoJson = {};
      for (const [k, v] of Object.entries(value)) {
        map[readMapKey(k, fs.mapKey!, at)] = readValue(
          v,
          { type: fs.type, label: 'singular' },
          schemas,
          `${at}["${k}"]`,
        );
      }
      if (Object.keys(map).length) out[name] = map;
    } else {
      const v = readValue(value, fs, schemas, at);
      if (keep(v, fs)) out[name] = v;
    }
  }
  return out;
}

/**
 * protobufjs (@grpc/proto-loader with `oneofs: true`) adds a virtual field named after each oneof that holds the
 * name of the member set (`"policy_choice": "latest"`). A config read from our gRPC ModelConfig by such a client
 * and sent back as a load override carries them; no real field can share a oneof's name, so they are skipped.
 */
function isOneofDiscriminator(schema: MessageSchema, key: string, value: unknown): boolean {
  if (typeof value !== 'string' || Object.hasOwn(schema.fields, key)) return false;
  return Object.entries(schema.fields).some(([name, fs]) => fs.oneof === key && name === value);
}

function resolveName(schema: MessageSchema, key: string): string | undefined {
  if (Object.hasOwn(schema.fields, key)) return key;
  return Object.keys(schema.fields).find((f) => jsonName(f) === key);
}

function readMapKey(key: string, type: ScalarType, path: string): string {
  if (type === 'string') return key;
  if (type === 'bool') return key === 'true' || key === 'false' ? key : fail(path, `map key '${key}' is not a bool`);
  if (!/^-?[0-9]+$/.test(key)) return fail(path, `map key '${key}' is not an integer (${type})`);
  const n = checkInteger(BigInt(key), type);
  return typeof n === 'number' ? String(n) : fail(path, `map key ${n.reason}`);
}

function readValue(v: unknown, fs: FieldSchema, schemas: SchemaRegistry, path: string): ProtoJsonValue {
  const type = fs.type;
  if (v === null) {
    // Inside arrays and maps null has no "default" meaning, as in protobuf.
    return fail(path, `null is not allowed here (${describeType(fs)})`);
  }
  if (type.kind === 'message') return readMessage(v, schemas, type.message, path);
  if (type.kind === 'enum') {
    if (typeof v === 'string' && Object.hasOwn(type.values, v)) return v;
    if (typeof v === 'number') {
      const hit = Object.entries(type.values).find(([, n]) => n === v);
      if (hit) return hit[0];
    }
    return fail(path, `unknown value ${got(v)} for enum ${type.name} (${Object.keys(type.values).join(', ')})`);
  }
  return readScalar(v, type.scalar, path);
}

const INTEGER_TEXT = /^-?[0-9]+$/;
const NON_FINITE: Record<string, number> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  '-Infinity': Number.NEGATIVE_INFINITY,
};

function readScalar(v: unknown, scalar: ScalarType, path: string): ProtoJsonValue {
  if (scalar === 'string') return typeof v === 'string' ? v : fail(path, `expected a string, got ${got(v)}`);
  if (scalar === 'bool') return typeof v === 'boolean' ? v : fail(path, `expected true or false, got ${got(v)}`);
  if (isIntegerType(scalar)) {
    let big: bigint | undefined;
    if (typeof v === 'number' && Number.isInteger(v)) {
      if (!Number.isSafeInteger(v)) fail(path, `${v} is beyond 2^53; send 64-bit values as strings`);
      big = BigInt(v);
    } else if (typeof v === 'string' && INTEGER_TEXT.test(v.trim())) {
      big = BigInt(v.trim());
    }
    if (big === undefined) return fail(path, `expected an integer (${scalar}), got ${got(v)}`);
    const n = checkInteger(big, scalar);
    return typeof n === 'number' ? n : fail(path, n.reason);
  }
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v in NON_FINITE) return NON_FINITE[v]!;
    const n = Number(v);
    if (v.trim() !== '' && Number.isFinite(n)) return n;
  }
  return fail(path, `expected a number (${scalar}), got ${got(v)}`);
}
