import type { Datatype } from '@nvcf/protocol';
import { buildModel, OnnxElemType } from '../onnx/builder.ts';
import { writeModelVersion } from './write-model.ts';

/** ONNX element type per API datatype for everything ONNX Runtime for Node can carry (BF16 cannot). */
const ONNX_ELEM_TYPE = {
  BOOL: OnnxElemType.BOOL,
  UINT8: OnnxElemType.UINT8,
  UINT16: OnnxElemType.UINT16,
  UINT32: OnnxElemType.UINT32,
  UINT64: OnnxElemType.UINT64,
  INT8: OnnxElemType.INT8,
  INT16: OnnxElemType.INT16,
  INT32: OnnxElemType.INT32,
  INT64: OnnxElemType.INT64,
  FP16: OnnxElemType.FLOAT16,
  FP32: OnnxElemType.FLOAT,
  FP64: OnnxElemType.DOUBLE,
  BYTES: OnnxElemType.STRING,
} as const satisfies Partial<Record<Datatype, OnnxElemType>>;

export type IdentityDatatype = keyof typeof ONNX_ELEM_TYPE;
export const IDENTITY_DATATYPES = Object.keys(ONNX_ELEM_TYPE) as IdentityDatatype[];

/** `identity_fp32`, `identity_bytes`, ...: lower case like Triton's QA model names. */
export function identityModelName(datatype: IdentityDatatype): string {
  return `identity_${datatype.toLowerCase()}`;
}

/** One Identity node, `INPUT0` → `OUTPUT0`, shape [batch, n] with both dimensions symbolic. */
export function buildIdentityModel(datatype: IdentityDatatype): Uint8Array {
  const elemType = ONNX_ELEM_TYPE[datatype];
  return buildModel({
    graphName: identityModelName(datatype),
    docString: `Identity over ${datatype} for datatype round-trip tests`,
    inputs: [{ name: 'INPUT0', elemType, shape: ['batch', 'n'] }],
    outputs: [{ name: 'OUTPUT0', elemType, shape: ['batch', 'n'] }],
    nodes: [{ opType: 'Identity', inputs: ['INPUT0'], outputs: ['OUTPUT0'], name: 'identity' }],
  });
}

/**
 * Writes `identity_<dtype>/1/model.onnx` for every datatype into `repositoryDir`. Test fixtures: kept out of the
 * default example set so a demo repository stays small.
 */
export async function writeIdentityModels(repositoryDir: string): Promise<void> {
  for (const datatype of IDENTITY_DATATYPES) {
    await writeModelVersion(repositoryDir, identityModelName(datatype), buildIdentityModel(datatype));
  }
}
