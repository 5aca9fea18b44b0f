import { AppError } from '../errors.ts';
import { floatToHalfBits } from './fp16.ts';
import type { Datatype, TensorData } from './tensor.ts';

/** Every datatype JSON can carry: BF16 has no JSON form (Open Inference Protocol REST: tensor data types). */
export type JsonDatatype = Exclude<Datatype, 'BF16'>;

export interface DecodeJsonValuesOptions {
  /**
   * Accept the strings "NaN", "Infinity" and "-Infinity" for FP16/FP32/FP64: the form
   * `encodeInferResponse` uses for values JSON numbers cannot express. Off for requests, where
   * clients must send finite numbers.
   */
  nonFiniteStrings?: boolean;
}

type SmallIntDatatype = 'UINT8' | 'UINT16' | 'UINT32' | 'INT8' | 'INT16' | 'INT32';
type SmallIntArray = Uint8Array | Uint16Array | Uint32Array | Int8Array | Int16Array | Int32Array;

const SMALL_INTS: Readonly<
  Record<SmallIntDatatype, { min: number; max: number; create: (n: number) => SmallIntArray }>
> = {
  UINT8: { min: 0, max: 0xff, create: (n) => new Uint8Array(n) },
  UINT16: { min: 0, max: 0xffff, create: (n) => new Uint16Array(n) },
  UINT32: { min: 0, max: 0xffff_ffff, create: (n) => new Uint32Array(n) },
  INT8: { min: -0x80, max: 0x7f, create: (n) => new Int8Array(n) },
  INT16: { min: -0x8000, max: 0x7fff, create: (n) => new Int16Array(n) },
  INT32: { min: -0x8000_0000, max: 0x7fff_ffff, create: (n) => new Int32Array(n) },
};

const INT64_RANGE = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const UINT64_RANGE = { min: 0n, max: 2n ** 64n - 1n };
const NON_FINITE: ReadonlyMap<unknown, number> = new Map([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
]);

const utf8 = new TextEncoder();

/**
 * Decodes flat, row-major JSON values into the typed storage `tensor.ts` prescribes for `datatype`,
 * rejecting any value the type cannot hold exactly (no silent wrap-around or truncation).
 *
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT naming the tensor, the element index and the offending value.
 * @example
 * decodeJsonValues('INT32', [1, 2, 3], "input 'X'"); // Int32Array [1, 2, 3]
 */
export function decodeJsonValues(
  datatype: JsonDatatype,
  values: readonly unknown[],
  label: string,
  opts: DecodeJsonValuesOptions = {},
): TensorData {
  switch (datatype) {
    case 'BOOL':
      return decodeBools(values, label);
    case 'INT64':
      return decodeBigInts(new BigInt64Array(values.length), INT64_RANGE, datatype, values, label);
    case 'UINT64':
      return decodeBigInts(new BigUint64Array(values.length), UINT64_RANGE, datatype, values, label);
    case 'FP16': {
      const out = new Uint16Array(values.length);
      for (let i = 0; i < values.length; i++) {
        out[i] = floatToHalfBits(toFloat(values[i], i, datatype, label, opts));
      }
      return out;
    }
    case 'FP32':
    case 'FP64': {
      const out = datatype === 'FP32' ? new Float32Array(values.length) : new Float64Array(values.length);
      for (let i = 0; i < values.length; i++) out[i] = toFloat(values[i], i, datatype, label, opts);
      return out;
    }
    case 'BYTES':
      return decodeStrings(values, label);
    default:
      return decodeSmallInts(datatype, values, label);
  }
}

function decodeSmallInts(datatype: SmallIntDatatype, values: readonly unknown[], label: string): SmallIntArray {
  const { min, max, create } = SMALL_INTS[datatype];
  const out = create(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    // One comparison chain for the valid case; the error path works out which rule failed.
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw integerError(value, i, datatype, label, `${min}..${max}`);
    }
    out[i] = value;
  }
  return out;
}

function decodeBigInts<T extends BigInt64Array | BigUint64Array>(
  out: T,
  range: { min: bigint; max: bigint },
  datatype: 'INT64' | 'UINT64',
  values: readonly unknown[],
  label: string,
): T {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    let big: bigint;
    if (typeof value === 'bigint') {
      big = value;
    } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
      big = BigInt(value);
    } else if (typeof value === 'number' && Number.isInteger(value)) {
      // JSON.parse has already rounded it: the digits the client sent are lost.
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: element ${i}: ${show(value)} is beyond the exact range of JSON numbers (±2^53); ` +
          `send ${datatype} values this large with the binary tensor data extension`,
      );
    } else {
      throw integerError(value, i, datatype, label, `${range.min}..${range.max}`);
    }
    if (big < range.min || big > range.max) throw integerError(big, i, datatype, label, `${range.min}..${range.max}`);
    out[i] = big;
  }
  return out;
}

function decodeBools(values: readonly unknown[], label: string): Uint8Array {
  const out = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    // Only JSON booleans, as Triton: 0/1 would be ambiguous with a datatype mix-up.
    if (value === true) out[i] = 1;
    else if (value !== false) throw valueError(value, i, label, 'expected true or false for BOOL');
  }
  return out;
}

function decodeStrings(values: readonly unknown[], label: string): Uint8Array[] {
  const out = new Array<Uint8Array>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'string') throw valueError(value, i, label, 'expected a string for BYTES');
    out[i] = utf8.encode(value);
  }
  return out;
}

function toFloat(
  value: unknown,
  index: number,
  datatype: string,
  label: string,
  opts: DecodeJsonValuesOptions,
): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  // A JSON parser that keeps big integers exact hands them over as bigint; as a float they just round.
  if (typeof value === 'bigint') return Number(value);
  if (opts.nonFiniteStrings) {
    const special = NON_FINITE.get(value);
    if (special !== undefined) return special;
  }
  throw valueError(value, index, label, `expected a finite number for ${datatype}`);
}

function integerError(value: unknown, index: number, datatype: string, label: string, range: string): AppError {
  if ((typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint') {
    return new AppError(
      'INVALID_ARGUMENT',
      `${label}: element ${index}: ${show(value)} is out of range for ${datatype} (${range})`,
    );
  }
  return valueError(value, index, label, `expected an integer for ${datatype}`);
}

function valueError(value: unknown, index: number, label: string, expected: string): AppError {
  if (Array.isArray(value)) {
    // A flat array with a nested one inside: flattenData leaves that case to us.
    return new AppError('INVALID_ARGUMENT', `${label}: 'data' is ragged or nested deeper than its shape`);
  }
  return new AppError('INVALID_ARGUMENT', `${label}: element ${index}: ${expected}, got ${show(value)}`);
}

/** A short rendering of an offending value for messages: clients may send megabytes in one string. */
function show(value: unknown): string {
  const text = typeof value === 'bigint' ? value.toString() : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
