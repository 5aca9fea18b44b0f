import { AppError } from '../../errors.ts';
import { elementCount, formatShape } from '../element-count.ts';
import type { Datatype, TensorData } from '../tensor.ts';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.ts';
import { checkTensorStorage, decodeRawTensor, encodeRawTensor, fixedByteSize } from './raw-tensor.ts';

/**
 * The byte size the binary form of a tensor must have, when the shape alone decides it (every
 * fixed-size datatype); `undefined` for BYTES, whose size depends on the elements.
 */
export function expectedBinaryByteSize(datatype: Datatype, count: number): number | undefined {
  return datatype === 'BYTES' ? undefined : count * fixedByteSize(datatype);
}

/**
 * Decodes one tensor's binary data (Triton binary data extension) after validating its shape:
 * the element count is checked against the limit and against the byte length before anything is
 * allocated. The result may be a view of `bytes` (see `decodeRawTensor`, `decodeBytesElements`).
 *
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT for a bad shape, a byte length the shape does not explain, a
 *   malformed BYTES element or a BOOL byte other than 0/1.
 * @example
 * decodeBinaryTensorData('FP32', [2], Buffer.alloc(8), "input 'X'"); // Float32Array [0, 0]
 */
export function decodeBinaryTensorData(
  datatype: Datatype,
  shape: readonly number[],
  bytes: Uint8Array,
  label: string,
  maxElements?: number,
): TensorData {
  const count = elementCount(shape, label, maxElements);
  if (datatype === 'BYTES') return decodeBytesElements(bytes, count, label);
  const expected = count * fixedByteSize(datatype);
  if (bytes.byteLength !== expected) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: shape ${formatShape(shape)} of ${datatype} needs ${expected} bytes of binary data, got ${bytes.byteLength}`,
    );
  }
  return decodeRawTensor(datatype, bytes, count, label);
}

/**
 * Encodes tensor storage in the binary form. Fixed-size data is a view of the storage on
 * little-endian hosts; BYTES elements are serialized with their length prefixes.
 *
 * @throws AppError INTERNAL when the storage does not match the datatype or fill the shape.
 * @example
 * encodeBinaryTensorData('INT32', [1], new Int32Array([7]), "output 'Y'"); // Uint8Array [7, 0, 0, 0]
 */
export function encodeBinaryTensorData(
  datatype: Datatype,
  shape: readonly number[],
  data: TensorData,
  label: string,
): Uint8Array {
  checkTensorStorage(datatype, shape, data, label);
  if (datatype === 'BYTES') return encodeBytesElements(data as Uint8Array[], label);
  return encodeRawTensor(datatype, data as Exclude<TensorData, Uint8Array[]>);
}
