import { AppError } from '../../errors.ts';
import type { ParseInferRequestOptions } from '../infer-request-json.ts';
import type { InferTensorJson } from '../json-tensor.ts';
import { type SharedMemoryRef, withoutSharedMemoryParameters } from '../shared-memory-ref.ts';
import type { Tensor } from '../tensor.ts';
import { takeBinaryTensor } from './binary-section.ts';

/**
 * Decodes an input whose bytes are in a registered shared memory region (Triton shared memory extension): read
 * through `opts.sharedMemory`, then checked and decoded as the binary extension's bytes are. The decoded tensor
 * keeps no shared memory parameters, so it is the same whichever way it travelled.
 *
 * @throws AppError INVALID_ARGUMENT for an input that also has `data` or `binary_data_size` (Triton's text), or
 *   on a surface without regions; the reader's errors for the region.
 */
export function takeSharedMemoryTensor(
  input: InferTensorJson,
  ref: SharedMemoryRef,
  label: string,
  opts: ParseInferRequestOptions,
): Tensor {
  const set = [
    ...(input.data !== undefined ? ["'data'"] : []),
    ...(input.parameters?.binary_data_size !== undefined ? ["'binary_data_size'"] : []),
  ];
  if (set.length > 0) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
        `'shared_memory_region' in 'parameters'. But set ${[...set, "'shared_memory_region'"].join(' ')}`,
    );
  }
  if (!opts.sharedMemory) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: shared memory regions are not available here; send the tensor's data in the request`,
    );
  }
  const bytes = opts.sharedMemory(ref, label);
  const parameters = withoutSharedMemoryParameters(input.parameters);
  const json: InferTensorJson = { name: input.name, datatype: input.datatype, shape: input.shape };
  if (parameters !== undefined) json.parameters = parameters;
  return takeBinaryTensor(json, bytes.byteLength, { bytes, offset: 0, hasHeader: true }, label, opts.maxElements);
}
