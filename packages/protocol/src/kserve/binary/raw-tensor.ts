import { AppError } from '../../errors.ts';
import { formatShape } from '../element-count.ts';
import { DATATYPE_BYTE_SIZE, type Datatype, type TensorData } from '../tensor.ts';

/** Every datatype with a fixed element size: all but BYTES. */
export type FixedDatatype = Exclude<Datatype, 'BYTES'>;

type FixedArray = Exclude<TensorData, Uint8Array[]>;
interface FixedArrayClass {
  new (length: number): FixedArray;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): FixedArray;
  readonly name: string;
}

/** The storage class `tensor.ts` prescribes for each fixed-size datatype. */
export const FIXED_ARRAY_CLASS: Readonly<Record<FixedDatatype, FixedArrayClass>> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
  BF16: Uint16Array,
};

/** The wire is little-endian (Triton binary data extension); typed arrays use the host's order. */
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Bytes per element of a fixed-size datatype. */
export function fixedByteSize(datatype: FixedDatatype): number {
  return DATATYPE_BYTE_SIZE[datatype] ?? 1;
}

/**
 * Decodes little-endian, row-major element bytes into the storage `tensor.ts` prescribes.
 *
 * The result is a zero-copy view of `bytes` when the slice is aligned for the element size (and the
 * host is little-endian); otherwise the bytes are copied first, because a typed array cannot start
 * at an offset that is not a multiple of its element size (a binary blob after a JSON header of odd
 * length is the usual case). Either way the caller must not reuse `bytes` for anything else.
 *
 * @param count the element count, already checked against the shape and the element limit.
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT when the byte length is not `count` elements, or a BOOL byte is
 *   neither 0 nor 1.
 * @example
 * decodeRawTensor('INT32', Buffer.from([1, 0, 0, 0, 2, 0, 0, 0]), 2, "input 'X'"); // Int32Array [1, 2]
 */
export function decodeRawTensor(datatype: FixedDatatype, bytes: Uint8Array, count: number, label: string): FixedArray {
  const size = fixedByteSize(datatype);
  if (bytes.byteLength !== count * size) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: ${datatype} binary data has ${bytes.byteLength} bytes, expected ${count * size} (${count} elements of ${size} bytes)`,
    );
  }
  if (datatype === 'BOOL') checkBools(bytes, label);
  const ArrayClass = FIXED_ARRAY_CLASS[datatype];
  if (size === 1) return new ArrayClass(bytes.buffer, bytes.byteOffset, count);
  if (LITTLE_ENDIAN_HOST && bytes.byteOffset % size === 0) return new ArrayClass(bytes.buffer, bytes.byteOffset, count);
  // A fresh ArrayBuffer is aligned for every element size.
  const copy = new Uint8Array(bytes);
  if (!LITTLE_ENDIAN_HOST) swapByteOrder(copy, size);
  return new ArrayClass(copy.buffer, 0, count);
}

/**
 * Encodes fixed-size tensor storage as little-endian bytes. On a little-endian host this is a view of
 * `data`'s memory (no copy), except for BOOL storage holding values other than 0/1, which is
 * normalized into a copy (any non-zero byte is true, as the JSON encoder reads it).
 *
 * @example
 * encodeRawTensor('INT16', new Int16Array([1, -1])); // Uint8Array [1, 0, 255, 255]
 */
export function encodeRawTensor(datatype: FixedDatatype, data: FixedArray): Uint8Array {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (datatype === 'BOOL' && bytes.some((b) => b > 1)) return bytes.map((b) => (b === 0 ? 0 : 1));
  if (LITTLE_ENDIAN_HOST) return bytes;
  const copy = new Uint8Array(bytes);
  swapByteOrder(copy, fixedByteSize(datatype));
  return copy;
}

/**
 * Reverses the byte order of every `size`-byte element in place: little- ↔ big-endian. Only a
 * big-endian host needs it; exported so that the conversion itself is tested everywhere.
 */
export function swapByteOrder(bytes: Uint8Array, size: number): void {
  if (size === 1) return;
  for (let start = 0; start + size <= bytes.length; start += size) {
    for (let i = start, j = start + size - 1; i < j; i++, j--) {
      const t = bytes[i] as number;
      bytes[i] = bytes[j] as number;
      bytes[j] = t;
    }
  }
}

function checkBools(bytes: Uint8Array, label: string): void {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b > 1) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: BOOL element ${i} is byte ${b}; binary BOOL elements must be 0 or 1`,
      );
    }
  }
}

/**
 * Checks that tensor storage is what `tensor.ts` prescribes for its datatype and fills its shape;
 * a runner or caller bug here would otherwise become a well-formed body that lies.
 *
 * @throws AppError INTERNAL naming the tensor.
 */
export function checkTensorStorage(
  datatype: Datatype,
  shape: readonly number[],
  data: TensorData,
  label: string,
): void {
  if (datatype === 'BYTES') {
    if (!Array.isArray(data)) throw new AppError('INTERNAL', `${label}: BYTES data must be an array of byte strings`);
  } else {
    const expected = FIXED_ARRAY_CLASS[datatype];
    if (!(data instanceof expected)) {
      throw new AppError(
        'INTERNAL',
        `${label}: ${datatype} data must be a ${expected.name}, got ${(data as object).constructor.name}`,
      );
    }
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) {
    throw new AppError(
      'INTERNAL',
      `${label}: shape ${formatShape(shape)} needs ${count} elements, data has ${data.length}`,
    );
  }
}
