import { AppError } from '@nvcf/protocol';
import type { InferParameterMap, InferParameterMsg } from './kserve-messages.ts';

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * One InferParameter as a plain value, the form the JSON path produces: booleans, strings and numbers;
 * a 64-bit integer beyond ±2^53 stays exact as a bigint.
 */
export function parameterValue(p: InferParameterMsg): unknown {
  switch (p.parameter_choice) {
    case 'bool_param':
      return p.bool_param ?? false;
    case 'string_param':
      return p.string_param ?? '';
    case 'double_param':
      return p.double_param ?? 0;
    case 'int64_param':
      return integer(p.int64_param ?? 0);
    case 'uint64_param':
      return integer(p.uint64_param ?? 0);
    default:
      // An InferParameter with no value set: proto3 cannot say more than "present".
      return undefined;
  }
}

function integer(value: string | number): number | bigint {
  if (typeof value === 'number') return value;
  const big = BigInt(value);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/**
 * Decodes a parameters map; `undefined` when empty, so that requests without parameters look the same
 * as on the HTTP path.
 */
export function decodeParameters(map: InferParameterMap | undefined): Record<string, unknown> | undefined {
  if (!map) return undefined;
  const keys = Object.keys(map);
  if (keys.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = parameterValue(map[key] as InferParameterMsg);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Request-level parameters: Triton reserves the `triton_` prefix and rejects it on both protocols
 * (Triton parameters extension).
 */
export function decodeRequestParameters(map: InferParameterMap | undefined): Record<string, unknown> | undefined {
  const params = decodeParameters(map);
  for (const key of Object.keys(params ?? {})) {
    if (key.startsWith('triton_')) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified ('${key}')`,
      );
    }
  }
  return params;
}

/** Encodes plain values as InferParameters; values no parameter can carry (objects, null) are dropped. */
export function encodeParameters(params: Record<string, unknown> | undefined): InferParameterMap {
  const out: InferParameterMap = {};
  for (const [key, value] of Object.entries(params ?? {})) {
    const p = encodeParameter(value);
    if (p) out[key] = p;
  }
  return out;
}

function encodeParameter(value: unknown): InferParameterMsg | undefined {
  switch (typeof value) {
    case 'boolean':
      return { bool_param: value };
    case 'string':
      return { string_param: value };
    case 'number':
      return Number.isSafeInteger(value) ? { int64_param: value } : { double_param: value };
    case 'bigint':
      if (value >= -INT64_MAX - 1n && value <= INT64_MAX) return { int64_param: value.toString() };
      if (value > INT64_MAX && value <= UINT64_MAX) return { uint64_param: value.toString() };
      return undefined;
    default:
      return undefined;
  }
}
