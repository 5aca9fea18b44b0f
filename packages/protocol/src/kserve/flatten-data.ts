import { AppError } from '../errors.ts';
import { formatShape } from './element-count.ts';

/**
 * Returns the row-major leaves of a JSON `data` array. `data` may be flat, fully nested to the
 * shape's rank, or nested only in its leading dimensions (the leaf arrays then hold the product of
 * the remaining dimensions); each nesting level must match its dimension exactly. A flat array is
 * returned as is, so the common case allocates nothing.
 *
 * @param count the element count already checked against the limit (see `elementCount`).
 * @throws AppError INVALID_ARGUMENT when the element count or the nesting does not match the shape.
 * @example
 * flattenData([[1, 2], [3, 4]], [2, 2], 4, "input 'X'"); // [1, 2, 3, 4]
 */
export function flattenData(data: unknown, shape: readonly number[], count: number, label: string): readonly unknown[] {
  if (!Array.isArray(data)) {
    throw new AppError('INVALID_ARGUMENT', `${label}: 'data' must be an array`);
  }
  if (!Array.isArray(data[0])) {
    // A nested array hiding later in a flat one is left to the value decoder, which reports it;
    // scanning for it here would cost a second pass over every request.
    if (data.length !== count) throw mismatch(data, shape, count, label);
    return data;
  }
  const out = new Array<unknown>(count);
  // collect() returns false on the first level that disagrees with the shape; the error is built
  // afterwards so that it can say whether the count or only the nesting is wrong.
  if (!collect(data, shape, 0, out, 0, remainingCounts(shape))) throw mismatch(data, shape, count, label);
  return out;
}

/** remaining[d] = product of shape[d..], the leaf count a flat array at depth d must have. */
function remainingCounts(shape: readonly number[]): number[] {
  const remaining = new Array<number>(shape.length + 1);
  remaining[shape.length] = 1;
  for (let d = shape.length - 1; d >= 0; d--) remaining[d] = (shape[d] ?? 0) * (remaining[d + 1] ?? 1);
  return remaining;
}

function collect(
  level: unknown[],
  shape: readonly number[],
  depth: number,
  out: unknown[],
  offset: number,
  remaining: readonly number[],
): boolean {
  // At depth === rank no dimension is left to split: an array there wraps a scalar.
  if (depth >= shape.length) return false;
  const nested = Array.isArray(level[0]);
  if (!nested) {
    if (level.length !== remaining[depth]) return false;
    for (let i = 0; i < level.length; i++) {
      const value = level[i];
      if (Array.isArray(value)) return false;
      out[offset + i] = value;
    }
    return true;
  }
  if (level.length !== shape[depth]) return false;
  const stride = remaining[depth + 1] ?? 0;
  for (let i = 0; i < level.length; i++) {
    const child = level[i];
    if (!Array.isArray(child) || !collect(child, shape, depth + 1, out, offset + i * stride, remaining)) {
      return false;
    }
  }
  return true;
}

/** Iterative: the nesting of a rejected body is arbitrary, and recursion could overflow the stack. */
function countLeaves(root: unknown[]): number {
  let total = 0;
  const stack: unknown[][] = [root];
  for (let level = stack.pop(); level !== undefined; level = stack.pop()) {
    for (const child of level) {
      if (Array.isArray(child)) stack.push(child);
      else total += 1;
    }
  }
  return total;
}

function mismatch(data: unknown[], shape: readonly number[], count: number, label: string): AppError {
  const got = countLeaves(data);
  if (got !== count) {
    return new AppError(
      'INVALID_ARGUMENT',
      `${label}: expected ${count} elements (shape ${formatShape(shape)}), got ${got}`,
    );
  }
  return new AppError(
    'INVALID_ARGUMENT',
    `${label}: nested 'data' does not match shape ${formatShape(shape)} (ragged or mis-nested arrays)`,
  );
}
