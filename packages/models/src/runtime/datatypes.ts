import type { Datatype } from '@nvcf/protocol';

/** onnxruntime-node tensor type strings and the API datatype each carries (open-inference-protocol.md §4). */
const DATATYPE_BY_ORT_TYPE = {
  bool: 'BOOL',
  uint8: 'UINT8',
  uint16: 'UINT16',
  uint32: 'UINT32',
  uint64: 'UINT64',
  int8: 'INT8',
  int16: 'INT16',
  int32: 'INT32',
  int64: 'INT64',
  float16: 'FP16',
  float32: 'FP32',
  float64: 'FP64',
  string: 'BYTES',
} as const satisfies Record<string, Datatype>;

export type OrtTensorType = keyof typeof DATATYPE_BY_ORT_TYPE;
type SupportedDatatype = (typeof DATATYPE_BY_ORT_TYPE)[OrtTensorType];

const ORT_TYPE_BY_DATATYPE = Object.fromEntries(
  Object.entries(DATATYPE_BY_ORT_TYPE).map(([ort, dt]) => [dt, ort]),
) as Record<SupportedDatatype, OrtTensorType>;

/** `undefined` for types we cannot carry (int4, uint4, ...). */
export function datatypeFromOrtType(ortType: string): Datatype | undefined {
  return Object.hasOwn(DATATYPE_BY_ORT_TYPE, ortType) ? DATATYPE_BY_ORT_TYPE[ortType as OrtTensorType] : undefined;
}

/** `undefined` for BF16, which onnxruntime-node cannot hold in a tensor. */
export function ortTypeFromDatatype(datatype: Datatype): OrtTensorType | undefined {
  return Object.hasOwn(ORT_TYPE_BY_DATATYPE, datatype)
    ? ORT_TYPE_BY_DATATYPE[datatype as SupportedDatatype]
    : undefined;
}

/** The typed array class each fixed-size datatype is stored in (tensor.ts); BYTES is an array of Uint8Array. */
export const TYPED_ARRAY_BY_DATATYPE = {
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
} as const satisfies Record<Exclude<Datatype, 'BYTES'>, unknown>;
