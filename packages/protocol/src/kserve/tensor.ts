/**
 * The in-memory tensor shared by every codec (KServe JSON, binary extension, gRPC) and the ONNX runner.
 * Data is a typed array whose element type follows the datatype (Open Inference Protocol REST: tensor data types).
 */
export const DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'BF16',
] as const;
export type Datatype = (typeof DATATYPES)[number];

export function isDatatype(value: string): value is Datatype {
  return (DATATYPES as readonly string[]).includes(value);
}

/**
 * Element storage per datatype:
 * BOOL → Uint8Array (0/1); UINT8 → Uint8Array; UINT16 → Uint16Array; UINT32 → Uint32Array;
 * UINT64 → BigUint64Array; INT8 → Int8Array; INT16 → Int16Array; INT32 → Int32Array;
 * INT64 → BigInt64Array; FP16 and BF16 → Uint16Array of raw bit patterns; FP32 → Float32Array;
 * FP64 → Float64Array; BYTES → Uint8Array[] (one byte string per element).
 */
export type TensorData =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array
  | Uint8Array[];

export interface Tensor {
  name: string;
  datatype: Datatype;
  /** Concrete dimensions (no -1), batch dimension included when the model batches. */
  shape: number[];
  data: TensorData;
  parameters?: Record<string, unknown>;
}

/** A model's declared input or output: `-1` marks a dynamic dimension. */
export interface TensorSpec {
  name: string;
  datatype: Datatype;
  shape: number[];
}

/** Bytes per element for fixed-size datatypes; BYTES is variable (undefined). */
export const DATATYPE_BYTE_SIZE: Readonly<Record<Datatype, number | undefined>> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: undefined,
  BF16: 2,
};
