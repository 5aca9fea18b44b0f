import { AppError } from '../../errors.ts';
import { elementCount, formatShape } from '../element-count.ts';
import type { InferTensorJson } from '../json-tensor.ts';
import { DATATYPES, isDatatype, type Tensor } from '../tensor.ts';
import { decodeBinaryTensorData, expectedBinaryByteSize } from './binary-tensor-data.ts';
import { INFERENCE_HEADER } from './json-section.ts';

/**
 * The bytes after the JSON part of a body, consumed tensor by tensor in JSON order
 * (Triton binary data extension).
 */
export interface BinarySection {
  readonly bytes: Uint8Array;
  offset: number;
  /** Whether an `Inference-Header-Content-Length` header split the body (for messages). */
  readonly hasHeader: boolean;
  /** The last tensor that consumed bytes, for the leftover message. */
  lastLabel?: string;
}

/**
 * Reads `parameters.binary_data_size`: `undefined` when absent, the byte count when it is a
 * non-negative integer.
 *
 * @throws AppError INVALID_ARGUMENT for any other value (a string, a fraction, a negative number).
 */
export function binaryDataSizeOf(parameters: Record<string, unknown> | undefined, label: string): number | undefined {
  if (parameters === undefined || !Object.hasOwn(parameters, 'binary_data_size')) return undefined;
  const size = parameters.binary_data_size;
  if (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0) return size;
  const shown = typeof size === 'bigint' ? size.toString() : JSON.stringify(size);
  throw new AppError(
    'INVALID_ARGUMENT',
    `${label}: 'binary_data_size' must be a non-negative integer byte count, got ${shown}`,
  );
}

/** `parameters` without `binary_data_size`; `undefined` when nothing else is left. */
export function withoutBinaryDataSize(
  parameters: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (parameters === undefined) return undefined;
  const { binary_data_size: _, ...rest } = parameters;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/**
 * Decodes a tensor whose JSON carries `binary_data_size` instead of `data`, taking its bytes from
 * the section. Everything the JSON says is checked before the bytes are touched: a size that
 * disagrees with the shape is reported as such, not as a confusing decode error further on.
 *
 * @param size the tensor's `binary_data_size` (see `binaryDataSizeOf`).
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT naming the tensor.
 */
export function takeBinaryTensor(
  json: InferTensorJson,
  size: number,
  section: BinarySection,
  label: string,
  maxElements?: number,
): Tensor {
  const { datatype, shape } = json;
  if (json.data !== undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: set only one of 'data' and 'binary_data_size' in 'parameters', not both`,
    );
  }
  if (!isDatatype(datatype)) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: unknown datatype '${datatype}' (expected one of ${DATATYPES.join(', ')})`,
    );
  }
  const expected = expectedBinaryByteSize(datatype, elementCount(shape, label, maxElements));
  if (expected !== undefined && size !== expected) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: 'binary_data_size' is ${size} but shape ${formatShape(shape)} of ${datatype} needs ${expected} bytes`,
    );
  }
  const remaining = section.bytes.byteLength - section.offset;
  if (size > remaining) {
    const why = section.hasHeader
      ? `only ${remaining} bytes of binary data remain (body truncated, or 'binary_data_size' too big)`
      : `the body has no binary data: send ${INFERENCE_HEADER} with the byte length of the JSON part`;
    throw new AppError('INVALID_ARGUMENT', `${label}: 'binary_data_size' is ${size} but ${why}`);
  }
  const bytes = section.bytes.subarray(section.offset, section.offset + size);
  section.offset += size;
  section.lastLabel = label;
  const tensor: Tensor = {
    name: json.name,
    datatype,
    shape,
    data: decodeBinaryTensorData(datatype, shape, bytes, label, maxElements),
  };
  const parameters = withoutBinaryDataSize(json.parameters);
  if (parameters !== undefined) tensor.parameters = parameters;
  return tensor;
}

/**
 * The binary part must be consumed exactly: leftover bytes mean a `binary_data_size` is too small
 * or the body carries trailing garbage, and either way the tensors cannot be trusted.
 *
 * @param kind `input` or `output`.
 * @throws AppError INVALID_ARGUMENT when bytes are left over.
 */
export function checkFullyConsumed(section: BinarySection, kind: 'input' | 'output'): void {
  const left = section.bytes.byteLength - section.offset;
  if (left === 0) return;
  const after =
    section.lastLabel === undefined
      ? `after the JSON part, but no ${kind} has 'binary_data_size' (is ${INFERENCE_HEADER} too small?)`
      : `after the binary data of ${section.lastLabel}, the last binary ${kind} ('binary_data_size' too small, or trailing bytes)`;
  throw new AppError('INVALID_ARGUMENT', `unexpected additional ${kind} data: ${left} bytes ${after}`);
}
