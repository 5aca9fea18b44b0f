import type { Datatype } from '@nvcf/protocol';

/** onnxruntime-node tensor type strings and the API datatype each carries (Triton model configuration: datatypes). */
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
