import { AppError, type Tensor } from '@nvcf/protocol';
import * as ort from 'onnxruntime-node';
import { datatypeFromOrtType, ortTypeFromDatatype } from './datatypes.ts';

// ignoreBOM keeps a leading U+FEFF as data instead of silently dropping it; fatal rejects invalid UTF-8.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * onnxruntime-node string tensors are JS strings handed to ORT as NUL-terminated UTF-8, so arbitrary bytes do not
 * survive: invalid UTF-8 would be replaced and everything after a NUL dropped. Refuse instead of corrupting.
 */
function bytesToStrings(model: string, name: string, elements: readonly Uint8Array[]): string[] {
  return elements.map((bytes, i) => {
    if (bytes.includes(0)) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference input '${name}' element ${i} for model '${model}' contains a NUL byte, which ONNX Runtime string tensors cannot hold`,
      );
    }
    try {
      return utf8Decoder.decode(bytes);
    } catch {
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference input '${name}' element ${i} for model '${model}' is not valid UTF-8, which ONNX Runtime string tensors require`,
      );
    }
  });
}

/**
 * FP16 goes in as a 'uint16' tensor relabelled 'float16'. Where Float16Array exists (Node 24), `new ort.Tensor(
 * 'float16', uint16Array)` rewraps the data as a Float16Array, and the onnxruntime-node 1.30 binding cannot read
 * one ("not enough space: expected 8, got 0"). The binding only reads `type`, `dims` and `data`, so keeping the
 * Uint16Array of bit patterns and fixing the label feeds ORT exactly the bytes we hold.
 */
function float16Tensor(data: Uint16Array, dims: readonly number[]): ort.Tensor {
  const tensor = new ort.Tensor('uint16', data, dims);
  (tensor as { type: string }).type = 'float16';
  return tensor;
}

/** Our tensor → ORT tensor. Expects a request that passed validateRequest (types and sizes already checked). */
export function toOrtTensor(model: string, tensor: Tensor): ort.Tensor {
  const { name, datatype, shape, data } = tensor;
  if (datatype === 'BYTES') return new ort.Tensor('string', bytesToStrings(model, name, data as Uint8Array[]), shape);
  if (datatype === 'FP16') return float16Tensor(data as Uint16Array, shape);
  if (datatype === 'BOOL') {
    // ORT passes bool bytes through untouched; anything but 0/1 would leak into outputs as-is.
    const bytes = data as Uint8Array;
    const bools = bytes.some((b) => b > 1) ? bytes.map((b) => (b ? 1 : 0)) : bytes;
    return new ort.Tensor('bool', bools, shape);
  }
  const ortType = ortTypeFromDatatype(datatype);
  if (!ortType) throw new AppError('UNIMPLEMENTED', `datatype ${datatype} cannot be passed to ONNX Runtime`);
  return new ort.Tensor(ortType as 'int32', data as Int32Array, shape);
}

/** ORT output → our tensor: FP16 back to raw bits, strings back to UTF-8 bytes, shape copied out. */
export function fromOrtTensor(name: string, value: ort.Tensor): Tensor {
  const datatype = datatypeFromOrtType(value.type);
  if (!datatype) {
    throw new AppError(
      'UNIMPLEMENTED',
      `inference output '${name}' has ONNX Runtime type '${value.type}', which this server cannot carry`,
    );
  }
  const shape = [...value.dims];
  if (datatype === 'BYTES') {
    return { name, datatype, shape, data: (value.data as string[]).map((s) => utf8Encoder.encode(s)) };
  }
  if (datatype === 'FP16') {
    // We keep bit patterns (tensor.ts). onnxruntime-node types FP16 data as Uint16Array but hands out a
    // Float16Array where the runtime has one: either is a view of the same 2-byte patterns, all that is read.
    const half = value.data;
    if (!ArrayBuffer.isView(half)) throw new AppError('INTERNAL', `FP16 output '${name}' is not a typed array`);
    return { name, datatype, shape, data: new Uint16Array(half.buffer, half.byteOffset, half.byteLength / 2) };
  }
  return { name, datatype, shape, data: value.data as Tensor['data'] };
}
