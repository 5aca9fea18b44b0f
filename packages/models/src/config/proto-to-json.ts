import {
  defaultValue,
  type FieldSchema,
  type ProtoJson,
  type ProtoJsonValue,
  type SchemaRegistry,
} from './proto-schema.ts';

export interface ProtoJsonPrintOptions {
  /**
   * How 64-bit integers print. `'number'` (default) is what Triton's config endpoint sends after its own
   * post-processing (Triton core); `'string'` is plain proto3 JSON (the v1 status JSON).
   */
  int64?: 'number' | 'string';
}

/**
 * Prints compact protobuf JSON the way protobuf's JSON printer does with `always_print_primitive_fields`: every
 * field in declaration order, scalars/enums/repeated/maps at their defaults included; unset messages and unset
 * oneof members left out; enums by name; non-finite floats as `"NaN"`/`"Infinity"`/`"-Infinity"`.
 *
 * @example
 * protoToFullJson({ latest: {} }, MODEL_CONFIG_SCHEMA, 'ModelVersionPolicy'); // { latest: { num_versions: 0 } }
 */
export function protoToFullJson(
  proto: ProtoJson,
  schemas: SchemaRegistry,
  messageName: string,
  opts: ProtoJsonPrintOptions = {},
): Record<string, unknown> {
  const int64AsString = opts.int64 === 'string';

  function printMessage(msg: ProtoJson, schemaName: string): Record<string, unknown> {
    const schema = schemas[schemaName];
    if (!schema) throw new Error(`schema has no message '${schemaName}'`);
    const out: Record<string, unknown> = {};
    for (const [name, fs] of Object.entries(schema.fields)) {
      const value = msg[name];
      if (value === undefined) {
        if (fs.oneof || (fs.label === 'singular' && fs.type.kind === 'message')) continue;
        out[name] = fs.label === 'repeated' ? [] : fs.label === 'map' ? {} : printValue(defaultValue(fs.type), fs);
        continue;
      }
      if (fs.label === 'repeated') out[name] = (value as ProtoJsonValue[]).map((v) => printValue(v, fs));
      else if (fs.label === 'map') {
        out[name] = Object.fromEntries(Object.entries(value as ProtoJson).map(([k, v]) => [k, printValue(v, fs)]));
      } else out[name] = printValue(value, fs);
    }
    return out;
  }

  function printValue(v: ProtoJsonValue, fs: FieldSchema): unknown {
    const type = fs.type;
    if (type.kind === 'message') return printMessage(v as ProtoJson, type.message);
    if (type.kind === 'enum' || typeof v !== 'number') return v;
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    if (int64AsString && (type.scalar === 'int64' || type.scalar === 'uint64')) return String(v);
    return v;
  }

  return printMessage(proto, messageName);
}
