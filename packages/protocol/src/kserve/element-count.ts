import { AppError } from '../errors.ts';

/**
 * Per-tensor element ceiling. 2^28 elements is 1 GiB of FP32: far above any real request, low enough
 * that a hostile shape is refused before anything is allocated for it.
 */
export const DEFAULT_MAX_ELEMENTS = 1 << 28;

/** Nested `data` is walked recursively to the shape's depth; a cap on rank keeps that off the stack limit. */
export const MAX_RANK = 64;

/** `[1,16]`: the compact form Triton uses in its messages. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/**
 * Validates a concrete shape and returns its element count (1 for a scalar shape `[]`). Runs before
 * any tensor storage exists, so a shape like `[1e9, 1e9]` costs nothing but this check.
 *
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT for a negative or fractional dimension, or a count over `maxElements`.
 * @example
 * elementCount([2, 8], "input 'INPUT0'"); // 16
 */
export function elementCount(
  shape: readonly number[],
  label: string,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
): number {
  if (shape.length > MAX_RANK) {
    throw new AppError('INVALID_ARGUMENT', `${label}: shape has ${shape.length} dimensions (limit ${MAX_RANK})`);
  }
  let hasZero = false;
  for (const dim of shape) {
    if (!Number.isSafeInteger(dim) || dim < 0) {
      // -1 is the usual culprit: a dynamic dimension copied from model metadata.
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: invalid shape ${formatShape(shape)}: dimensions must be non-negative integers`,
      );
    }
    if (dim === 0) hasZero = true;
  }
  // An empty tensor is valid whatever its other dimensions are.
  if (hasZero) return 0;
  let count = 1;
  for (const dim of shape) {
    count *= dim;
    // Stop at the first step past the limit: the running product stays exact below 2^53.
    if (count > maxElements || count > Number.MAX_SAFE_INTEGER) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: shape ${formatShape(shape)} has too many elements (limit ${maxElements})`,
      );
    }
  }
  return count;
}
