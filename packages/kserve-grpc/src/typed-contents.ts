import { AppError, type Datatype, decodeJsonValues, formatShape, type TensorData } from '@nvcf/protocol';
import type { InferTensorContentsMsg } from './kserve-messages.ts';

type ContentsField = keyof InferTensorContentsMsg;

/** The typed field each datatype travels in (Open Inference Protocol gRPC); FP16 and BF16 have none. */
export const CONTENTS_FIELD: Readonly<Record<Datatype, ContentsField | undefined>> = {
  BOOL: 'bool_contents',
  UINT8: 'uint_contents',
  UINT16: 'uint_contents',
  UINT32: 'uint_contents',
  UINT64: 'uint64_contents',
  INT8: 'int_contents',
  INT16: 'int_contents',
  INT32: 'int_contents',
  INT64: 'int64_contents',
  FP16: undefined,
  FP32: 'fp32_contents',
  FP64: 'fp64_contents',
  BYTES: 'bytes_contents',
  BF16: undefined,
};

const FIELDS = Object.keys({
  bool_contents: 0,
  int_contents: 0,
  int64_contents: 0,
  uint_contents: 0,
  uint64_contents: 0,
  fp32_contents: 0,
  fp64_contents: 0,
  bytes_contents: 0,
} satisfies Record<ContentsField, 0>) as ContentsField[];

/**
 * Decodes an input's typed `contents` (as grpc_explicit_*_content_client.py send them) into the tensor
 * storage `tensor.ts` prescribes. protobuf has already checked each value against the field's type;
 * what is left is the narrower datatypes' ranges (INT8 in int_contents), the element count, and
 * which field was used.
 *
 * @param count the element count of the shape, already checked against the element limit.
 * @throws AppError INVALID_ARGUMENT naming the input.
 */
export function decodeTypedContents(
  datatype: Datatype,
  shape: readonly number[],
  count: number,
  contents: InferTensorContentsMsg | null,
  label: string,
): TensorData {
  const field = CONTENTS_FIELD[datatype];
  if (field === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: ${datatype} has no typed contents field; send it in raw_input_contents`,
    );
  }
  const values = (contents?.[field] ?? []) as readonly unknown[];
  if (values.length !== count) {
    const other =
      values.length === 0 && contents ? FIELDS.find((f) => f !== field && contents[f].length > 0) : undefined;
    if (other) {
      throw new AppError('INVALID_ARGUMENT', `${label}: ${datatype} contents belong in '${field}', got '${other}'`);
    }
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: expected ${count} elements in '${field}' for shape ${formatShape(shape)}, got ${values.length}`,
    );
  }
  switch (datatype) {
    case 'FP32':
      return Float32Array.from(values as number[]);
    case 'FP64':
      return Float64Array.from(values as number[]);
    case 'INT64':
    case 'UINT64':
      // Decimal strings (longs: String) keep every digit; decodeJsonValues checks the range.
      return decodeJsonValues(datatype, (values as (string | number)[]).map(BigInt), label);
    case 'BYTES':
      return (values as Uint8Array[]).map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    default:
      return decodeJsonValues(datatype as Exclude<Datatype, 'FP16' | 'BF16'>, values, label);
  }
}
