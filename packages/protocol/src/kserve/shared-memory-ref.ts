import { AppError } from '../errors.ts';

/**
 * Where a tensor's bytes live instead of the request or response body (Triton shared memory extension): a
 * registered region, a byte count, and an offset inside the region.
 */
export interface SharedMemoryRef {
  region: string;
  byteSize: number;
  offset: number;
}

/** Reads a tensor's bytes from a registered region; throws AppError for an unknown region or a range outside it. */
export type SharedMemoryReader = (ref: SharedMemoryRef, label: string) => Uint8Array;

/**
 * A tensor's `shared_memory_region` / `shared_memory_byte_size` / `shared_memory_offset` parameters (HTTP
 * JSON form; the gRPC adapter converts its typed parameters to the same values). Undefined when the tensor
 * names no region. As Triton's HTTP frontend, a missing byte size reads as 0 (and fails later on the size).
 *
 * @throws AppError INVALID_ARGUMENT for a region that is not a string, or a size or offset that is not a
 *   non-negative integer, or an offset without a region.
 */
export function sharedMemoryRefOf(
  parameters: Record<string, unknown> | undefined,
  tensor: string,
): SharedMemoryRef | undefined {
  if (parameters === undefined) return undefined;
  const region = parameters.shared_memory_region;
  if (region === undefined) {
    if (parameters.shared_memory_offset !== undefined) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor '${tensor}'`,
      );
    }
    return undefined;
  }
  if (typeof region !== 'string') {
    throw new AppError(
      'INVALID_ARGUMENT',
      `invalid value type for 'shared_memory_region' parameter for tensor '${tensor}', expected string_param.`,
    );
  }
  return {
    region,
    byteSize: byteCount(parameters.shared_memory_byte_size, 'shared_memory_byte_size', tensor) ?? 0,
    offset: byteCount(parameters.shared_memory_offset, 'shared_memory_offset', tensor) ?? 0,
  };
}

/** `parameters` without the shared memory keys; `undefined` when nothing else is left. */
export function withoutSharedMemoryParameters(
  parameters: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (parameters === undefined) return undefined;
  const {
    shared_memory_region: _r,
    shared_memory_byte_size: _s,
    shared_memory_offset: _o,
    binary_data_size: _b,
    ...rest
  } = parameters;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function byteCount(value: unknown, key: string, tensor: string): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) return n;
  throw new AppError(
    'INVALID_ARGUMENT',
    `invalid value type for '${key}' parameter for tensor '${tensor}', expected int64_param.`,
  );
}
