import type { TensorSpec } from '@nvcf/protocol';
import type { InferenceSession } from 'onnxruntime-node';
import { datatypeFromOrtType } from './datatypes.ts';

/** A model input or output whose ORT type has no API datatype (int4, a sequence, ...). */
export interface UnsupportedTensor {
  name: string;
  kind: 'input' | 'output';
  /** The ORT type string, or `'non-tensor'` for sequences and maps. */
  ortType: string;
}

export interface ModelSignature {
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  /** Kept apart so the model still loads; using one of these is an error at request time. */
  unsupported: UnsupportedTensor[];
}

/** Symbolic (`'batch'`) and unknown dimensions are dynamic: `-1`, as Triton reports them. */
function toSpecShape(shape: readonly (number | string)[]): number[] {
  return shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
}

function readSide(
  metadata: readonly InferenceSession.ValueMetadata[],
  kind: UnsupportedTensor['kind'],
  unsupported: UnsupportedTensor[],
): TensorSpec[] {
  const specs: TensorSpec[] = [];
  for (const m of metadata) {
    const datatype = m.isTensor ? datatypeFromOrtType(m.type) : undefined;
    if (m.isTensor && datatype) specs.push({ name: m.name, datatype, shape: toSpecShape(m.shape) });
    else unsupported.push({ name: m.name, kind, ortType: m.isTensor ? m.type : 'non-tensor' });
  }
  return specs;
}

/** Reads inputs and outputs, in the model's order, from a loaded session's metadata. */
export function readModelSignature(session: InferenceSession): ModelSignature {
  const unsupported: UnsupportedTensor[] = [];
  const inputs = readSide(session.inputMetadata, 'input', unsupported);
  const outputs = readSide(session.outputMetadata, 'output', unsupported);
  return { inputs, outputs, unsupported };
}
