import { AppError } from '../errors.ts';
import { checkTensorStorage } from './binary/raw-tensor.ts';
import { halfBitsToFloat } from './fp16.ts';
import type { Tensor } from './tensor.ts';

export interface ClassifyOptions {
  /** The model batches: `shape[0]` is the batch, and each batch item is classified on its own. */
  batching: boolean;
  /** Class labels by index (the output's `label_filename`, line i ↔ index i). */
  labels?: readonly string[];
}

const utf8 = new TextEncoder();

/**
 * Triton's classification extension: replaces an output by its top
 * `classCount` classes as a BYTES tensor of `"<value>:<index>"` or `"<value>:<index>:<label>"`
 * strings, shape `[batch, N']` when batching else `[N']`, N' = min(classCount, elements per item).
 *
 * As Triton's `classification.cc`: values are compared in the output's own type (64-bit integers
 * exactly), largest first; floats print like C's `%f` (six decimals, exactly rounded:
 * `"3.300000:1"`) and integers print as integers (`std::to_string`); the index is the element's
 * position within its batch item; a label is added when `labels` has one for that index.
 * Where Triton is silent or undefined we choose: ties keep the lower index first (Triton's
 * `std::sort` is unstable), NaN sorts last and prints `nan` (`inf`/`-inf` likewise), and FP16/BF16
 * outputs are classified by their numeric value (Triton refuses them).
 *
 * @throws AppError INVALID_ARGUMENT for a count that is not a positive integer, a BYTES or BOOL
 *   output, or a batching output without a batch dimension.
 * @example
 * classify({ name: 'OUT', datatype: 'FP32', shape: [3], data: new Float32Array([0.5, 3.3, 1]) }, 2, { batching: false });
 * // { name: 'OUT', datatype: 'BYTES', shape: [2], data: ['3.300000:1', '1.000000:2'] as UTF-8 }
 */
export function classify(tensor: Tensor, classCount: number, opts: ClassifyOptions): Tensor {
  const { name, datatype, shape } = tensor;
  const label = `output '${name}'`;
  if (!Number.isSafeInteger(classCount) || classCount <= 0) {
    throw new AppError('INVALID_ARGUMENT', `${label}: 'classification' must be a positive integer, got ${classCount}`);
  }
  if (datatype === 'BYTES' || datatype === 'BOOL') {
    throw new AppError(
      'INVALID_ARGUMENT',
      `class result not available for output '${name}' due to unsupported type '${datatype}'`,
    );
  }
  if (opts.batching && shape.length === 0) {
    throw new AppError('INVALID_ARGUMENT', `${label}: a batching model's output needs a batch dimension to classify`);
  }
  checkTensorStorage(datatype, shape, tensor.data, label);

  const values = numericValues(tensor);
  const isFloat = datatype.startsWith('FP') || datatype === 'BF16';
  const format = (v: number | bigint): string => (isFloat ? formatFixed6(v as number) : String(v));
  const batch = opts.batching ? (shape[0] as number) : 1;
  const perItem = opts.batching ? shape.slice(1).reduce((a, b) => a * b, 1) : values.length;
  const kept = Math.min(classCount, perItem);
  const out: Uint8Array[] = [];
  for (let b = 0; b < batch; b++) {
    const base = b * perItem;
    const order = Array.from({ length: perItem }, (_, k) => k);
    order.sort(
      (i, j) => compareDescending(values[base + i] as number | bigint, values[base + j] as number | bigint) || i - j,
    );
    for (let k = 0; k < kept; k++) {
      const index = order[k] as number;
      const classLabel = opts.labels?.[index];
      const text = `${format(values[base + index] as number | bigint)}:${index}${classLabel === undefined ? '' : `:${classLabel}`}`;
      out.push(utf8.encode(text));
    }
  }
  return { name, datatype: 'BYTES', shape: opts.batching ? [batch, kept] : [kept], data: out };
}

/** The elements as comparable JS values: halves widened to numbers, everything else as stored. */
function numericValues(tensor: Tensor): ArrayLike<number | bigint> {
  const data = tensor.data as Exclude<Tensor['data'], Uint8Array[]>;
  if (tensor.datatype === 'FP16') return Float64Array.from(data as Uint16Array, halfBitsToFloat);
  if (tensor.datatype === 'BF16') {
    // bfloat16 is the top half of a float32.
    return new Float32Array(Uint32Array.from(data as Uint16Array, (bits) => bits << 16).buffer);
  }
  return data;
}

/** Largest first; NaN after every number (C's `>` leaves it unordered, which sorts unpredictably). */
function compareDescending(x: number | bigint, y: number | bigint): number {
  if (x > y) return -1;
  if (x < y) return 1;
  if (x === y) return 0;
  // Unordered: at least one is NaN (bigints are always ordered).
  const xNaN = Number.isNaN(x);
  return xNaN === Number.isNaN(y) ? 0 : xNaN ? 1 : -1;
}

const MILLION = 1_000_000n;

/**
 * Formats a number like C's `printf("%f")`: six decimals from the exact binary value, ties to even,
 * no exponent however large (`toFixed` rounds ties away from zero and switches to exponent form at
 * 1e21). `-0` and negatives that round to zero keep their sign, as in C.
 *
 * @example
 * formatFixed6(3.3); // '3.300000'
 * formatFixed6(0.0078125); // '0.007812'
 */
export function formatFixed6(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  // |x| = mantissa * 2^exponent exactly.
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  const numerator = mantissa * MILLION;
  let scaled: bigint;
  if (exponent >= 0) {
    scaled = numerator << BigInt(exponent);
  } else {
    const denominator = 1n << BigInt(-exponent);
    scaled = numerator / denominator;
    const twice = (numerator % denominator) * 2n;
    if (twice > denominator || (twice === denominator && (scaled & 1n) === 1n)) scaled += 1n;
  }
  return `${sign}${scaled / MILLION}.${(scaled % MILLION).toString().padStart(6, '0')}`;
}
