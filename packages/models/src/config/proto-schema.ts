import { AppError } from '@nvcf/protocol';

/**
 * Just enough of a protobuf descriptor to read and write text format and protobuf JSON without generated code:
 * which fields a message has, in declaration order, whether each is repeated, a map, a message, an enum or a
 * scalar, and its oneof. Tables are plain data so other surfaces (the Triton v1 API) can describe their messages.
 */
export type ScalarType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double';

export type FieldType =
  | { kind: 'scalar'; scalar: ScalarType }
  /** Value names to numbers; proto3's default is the one numbered 0. */
  | { kind: 'enum'; name: string; values: Readonly<Record<string, number>> }
  /** Refers to another entry of the same registry by its key. */
  | { kind: 'message'; message: string };

export interface FieldSchema {
  type: FieldType;
  label: 'singular' | 'repeated' | 'map';
  /** For maps: the key type (values take `type`). */
  mapKey?: ScalarType;
  /** Members of one oneof exclude each other, and keep presence even at their default value. */
  oneof?: string;
}

export interface MessageSchema {
  /** Shown in errors: `unknown field 'foo' in ModelInput`. */
  name: string;
  /** In declaration order, which is the order protobuf's JSON printer writes. */
  fields: Readonly<Record<string, FieldSchema>>;
}

export type SchemaRegistry = Readonly<Record<string, MessageSchema>>;

/**
 * Protobuf JSON in this project's canonical compact form: original field names, enums by name, 64-bit integers
 * as numbers, and fields at their proto3 default left out (messages and oneof members keep presence).
 */
export type ProtoJsonValue = string | number | boolean | ProtoJson | ProtoJsonValue[];
export interface ProtoJson {
  [field: string]: ProtoJsonValue;
}

/**
 * A config that cannot be used: JSON that does not fit the schema, a hand-built config that cannot be printed,
 * or (with a `failed to load '<model>': ` prefix) a config that does not fit its model. INVALID_ARGUMENT, so a
 * load request answers 400 and a retry will not help.
 *
 * @example
 * throw new ModelConfigError("input[0].dims[1]: expected an integer (int64), got \"x\"");
 */
export class ModelConfigError extends AppError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
    this.name = 'ModelConfigError';
  }
}

/*
 * Builders for schema tables, e.g.
 *   const Status: MessageSchema = { name: 'RequestStatus', fields: {
 *     code: enumOf('RequestStatusCode', ['INVALID', 'SUCCESS']), msg: scalar('string'), request_id: scalar('uint64') } };
 */
export const scalar = (s: ScalarType): FieldSchema => ({ type: { kind: 'scalar', scalar: s }, label: 'singular' });
export const message = (name: string): FieldSchema => ({ type: { kind: 'message', message: name }, label: 'singular' });
export const repeated = (f: FieldSchema): FieldSchema => ({ ...f, label: 'repeated' });
export const mapOf = (key: ScalarType, value: FieldSchema): FieldSchema => ({ ...value, label: 'map', mapKey: key });
export const inOneof = (oneof: string, f: FieldSchema): FieldSchema => ({ ...f, oneof });

/**
 * An enum whose values are numbered 0, 1, 2, ... in the order given (write `type` by hand for gaps, e.g. v1's
 * SERVER_FAILED_TO_INITIALIZE = 10).
 *
 * @example
 * enumOf('ModelQueuePolicy.TimeoutAction', ['REJECT', 'DELAY']); // REJECT = 0, DELAY = 1
 */
export function enumOf(name: string, names: readonly string[]): FieldSchema {
  return { type: { kind: 'enum', name, values: Object.fromEntries(names.map((n, i) => [n, i])) }, label: 'singular' };
}

/** proto3's default value of a singular scalar or enum field. */
export function defaultValue(type: FieldType): string | number | boolean {
  if (type.kind === 'enum') {
    const entries = Object.entries(type.values);
    return (entries.find(([, n]) => n === 0) ?? entries[0])?.[0] ?? '';
  }
  if (type.kind === 'message') throw new Error('messages have no scalar default');
  if (type.scalar === 'string') return '';
  if (type.scalar === 'bool') return false;
  return 0;
}

const INT_RANGES: Record<string, readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * Checks an integer against its protobuf type and turns it into a JS number. 64-bit values beyond 2^53 are
 * refused rather than rounded: a config or id that silently changes value is worse than a clear error.
 * Returns an error reason, or the number.
 */
export function checkInteger(value: bigint, type: ScalarType): number | { reason: string } {
  const range = INT_RANGES[type];
  if (!range) return { reason: `${type} is not an integer type` };
  if (value < range[0] || value > range[1]) return { reason: `${value} is out of range for ${type}` };
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    return { reason: `${value} is beyond 2^53, the largest integer this server holds exactly` };
  }
  return n;
}

export const isIntegerType = (s: ScalarType) => s in INT_RANGES;

/** The protobuf JSON name of a field (`max_batch_size` → `maxBatchSize`), which JSON parsers must also accept. */
export const jsonName = (field: string) => field.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function describeType(f: FieldSchema): string {
  if (f.type.kind === 'enum') return `enum ${f.type.name}`;
  if (f.type.kind === 'message') return `message ${f.type.message}`;
  return f.type.scalar;
}
