import { z } from 'zod';
import { AppError } from '../errors.ts';
import { type DecodeJsonValuesOptions, decodeJsonValues } from './decode-json-values.ts';
import { elementCount } from './element-count.ts';
import { flattenData } from './flatten-data.ts';
import { DATATYPES, isDatatype, type Tensor } from './tensor.ts';

/** Free-form `parameters` object, as on requests, tensors and responses. */
export const JsonParameters = z.record(z.string(), z.unknown());

/**
 * One tensor in JSON (request input or response output). Only the structure is checked here;
 * datatype, shape and data rules need Triton-style messages, which `decodeJsonTensor` gives.
 */
export const InferTensorJson = z.object({
  name: z.string().min(1),
  shape: z.array(z.number()),
  datatype: z.string(),
  parameters: JsonParameters.optional(),
  // Left unparsed: zod walking millions of elements would double the decode cost.
  data: z.unknown().optional(),
});
export type InferTensorJson = z.infer<typeof InferTensorJson>;

export interface DecodeJsonTensorOptions extends DecodeJsonValuesOptions {
  /** Per-tensor element limit, checked before any storage is allocated. */
  maxElements?: number;
}

/**
 * Turns a structurally valid JSON tensor into a `Tensor`: checks datatype and shape first, then
 * flattens and decodes `data`.
 *
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT for an unknown datatype, BF16, a bad shape, missing or
 *   mismatched data, or a value the datatype cannot hold.
 * @example
 * decodeJsonTensor({ name: 'X', datatype: 'INT32', shape: [2], data: [1, 2] }, "input 'X'");
 */
export function decodeJsonTensor(json: InferTensorJson, label: string, opts: DecodeJsonTensorOptions = {}): Tensor {
  const { datatype, shape } = json;
  if (!isDatatype(datatype)) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: unknown datatype '${datatype}' (expected one of ${DATATYPES.join(', ')})`,
    );
  }
  if (datatype === 'BF16') {
    throw new AppError('INVALID_ARGUMENT', `${label}: BF16 tensors must use the binary tensor data extension`);
  }
  const count = elementCount(shape, label, opts.maxElements);
  if (json.data === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: missing 'data'; JSON tensors carry their values inline (binary data needs the binary tensor data extension)`,
    );
  }
  const values = flattenData(json.data, shape, count, label);
  const tensor: Tensor = { name: json.name, datatype, shape, data: decodeJsonValues(datatype, values, label, opts) };
  if (json.parameters !== undefined) tensor.parameters = json.parameters;
  return tensor;
}
