import { AppError } from '../../errors.ts';
import { elementCount, formatShape } from '../element-count.ts';
import type { InferRequest } from '../infer-request-json.ts';
import type { Tensor, TensorSpec } from '../tensor.ts';
import { decodeRawTensor, fixedByteSize } from './raw-tensor.ts';

/** The model's only input, as a raw single-input request needs it. */
export interface RawInputSpec extends TensorSpec {
  /**
   * True when the model batches (`max_batch_size` ≥ 1): `shape[0]` is then the `-1` batch dimension
   * of the metadata shape, and a raw request fixes it to 1 as Triton does. When false or absent the
   * shape is taken as it is: one `-1` anywhere in it is deduced from the body length, which for a
   * batching model lets a raw body carry several rows.
   */
  batched?: boolean;
}

/**
 * Decodes a raw single-input request (`Inference-Header-Content-Length: 0`;
 * Triton binary data extension: raw binary request): the whole body is the data of the model's only input.
 * Follows Triton's `InferenceRequest::Normalize`:
 * - batch dimension (see `RawInputSpec.batched`) fixed to 1;
 * - at most one other variable dimension, deduced from the body length, which must then be a whole
 *   number of rows (Triton divides and lets a later size check fail; we say so here);
 * - BYTES: the input must have shape `[1]` (after the batch dimension); the body is that one
 *   element's bytes, with no length prefix.
 * All outputs of such a request are returned binary (`encodeHttpInferResponse`'s `rawSingleInput`).
 *
 * @param spec the model's only input; `undefined` when the model does not have exactly one.
 * @throws AppError INVALID_ARGUMENT naming the input.
 * @example
 * decodeRawSingleInput(Buffer.alloc(64), { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16], batched: true });
 * // { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array(16) }] }
 */
export function decodeRawSingleInput(
  body: Uint8Array,
  spec: RawInputSpec | undefined,
  opts: { maxElements?: number } = {},
): InferRequest {
  if (spec === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      'Raw request (Inference-Header-Content-Length: 0) must be for a model with exactly one input, ' +
        'whose data is the whole body; send a JSON header for this model',
    );
  }
  const label = `input '${spec.name}'`;
  if (spec.batched && spec.shape.length === 0) {
    throw new AppError('INVALID_ARGUMENT', `${label}: a batching model's input needs a batch dimension`);
  }
  const declared = spec.batched ? spec.shape.slice(1) : spec.shape;
  const prefix = spec.batched ? [1] : [];
  const variable = declared.filter((d) => d === -1).length;

  if (spec.datatype === 'BYTES') {
    if (variable > 0 || declared.reduce((a, b) => a * b, 1) !== 1) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: for BYTES datatype raw input, the model must have input shape [1], has ${formatShape(declared)}`,
      );
    }
    const tensor: Tensor = {
      name: spec.name,
      datatype: 'BYTES',
      shape: [...prefix, ...declared],
      data: [new Uint8Array(body.buffer, body.byteOffset, body.byteLength)],
    };
    return { inputs: [tensor] };
  }

  if (variable > 1) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `The shape of the raw input '${spec.name}' can not be deduced because there are more than one variable-sized dimension`,
    );
  }
  const size = fixedByteSize(spec.datatype);
  const rowBytes = declared.reduce((a, d) => (d === -1 ? a : a * d), size);
  let shape = [...prefix, ...declared];
  if (variable === 1) {
    // A zero-size row (another dimension is 0) fits any number of rows: only an empty body is unambiguous.
    const rows = rowBytes === 0 ? (body.byteLength === 0 ? 0 : Number.NaN) : body.byteLength / rowBytes;
    if (!Number.isSafeInteger(rows)) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: raw body of ${body.byteLength} bytes is not a whole number of ${spec.datatype} rows ` +
          `of ${rowBytes} bytes for shape ${formatShape(shape)}`,
      );
    }
    shape = shape.map((d) => (d === -1 ? rows : d));
  }
  const count = elementCount(shape, label, opts.maxElements);
  if (body.byteLength !== count * size) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: raw body has ${body.byteLength} bytes, shape ${formatShape(shape)} of ${spec.datatype} needs ${count * size}`,
    );
  }
  return {
    inputs: [
      { name: spec.name, datatype: spec.datatype, shape, data: decodeRawTensor(spec.datatype, body, count, label) },
    ],
  };
}
