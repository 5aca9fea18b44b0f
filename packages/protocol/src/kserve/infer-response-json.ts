import { z } from 'zod';
import { AppError } from '../errors.ts';
import { formatShape } from './element-count.ts';
import { encodeJsonValues } from './encode-json-values.ts';
import { decodeJsonTensor, InferTensorJson, JsonParameters } from './json-tensor.ts';
import type { Tensor } from './tensor.ts';
import { zodIssueMessage } from './zod-issue-message.ts';

/** A decoded infer response, independent of the wire. */
export interface InferResponse {
  model_name: string;
  /** A string on the wire ("1"), as Triton sends it. */
  model_version: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: Tensor[];
}

/** The JSON infer response body (Open Inference Protocol REST: inference response), structure only. */
export const InferResponseJson = z.object({
  model_name: z.string(),
  model_version: z.string(),
  id: z.string().optional(),
  parameters: JsonParameters.optional(),
  outputs: z.array(InferTensorJson),
});
export type InferResponseJson = z.infer<typeof InferResponseJson>;

/**
 * Serializes a response as KServe V2 JSON, building the text directly rather than stringifying
 * one big object: each output's data takes its datatype's fastest path (see `encodeJsonValues`).
 *
 * @throws AppError INVALID_ARGUMENT for outputs JSON cannot carry (BF16, non-UTF-8 BYTES), which
 *   need `binary_data_output`.
 * @example
 * encodeInferResponse({ model_name: 'simple', model_version: '1', outputs: [
 *   { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, 2]) },
 * ] });
 * // '{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,2],"data":[1,2]}]}'
 */
export function encodeInferResponse(res: InferResponse): string {
  let json = `{"model_name":${JSON.stringify(res.model_name)},"model_version":${JSON.stringify(res.model_version)}`;
  if (res.id !== undefined) json += `,"id":${JSON.stringify(res.id)}`;
  if (res.parameters !== undefined) json += `,"parameters":${JSON.stringify(res.parameters)}`;
  return `${json},"outputs":[${res.outputs.map(encodeOutput).join(',')}]}`;
}

function encodeOutput(tensor: Tensor): string {
  const label = `output '${tensor.name}'`;
  // A runner bug that returns the wrong element count must not turn into a well-formed lie.
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  if (tensor.data.length !== count) {
    throw new AppError(
      'INTERNAL',
      `${label}: shape ${formatShape(tensor.shape)} needs ${count} elements, data has ${tensor.data.length}`,
    );
  }
  const parameters = tensor.parameters === undefined ? '' : `,"parameters":${JSON.stringify(tensor.parameters)}`;
  return (
    `{"name":${JSON.stringify(tensor.name)},"datatype":"${tensor.datatype}","shape":${formatShape(tensor.shape)}` +
    `${parameters},"data":${encodeJsonValues(tensor.datatype, tensor.data, label)}}`
  );
}

/**
 * Parses a KServe V2 JSON response (text or an already parsed object) back into typed tensors: the
 * inverse of `encodeInferResponse`, accepting its "NaN"/"Infinity"/"-Infinity" strings. From text,
 * INT64/UINT64 values beyond 2^53 keep their exact digits.
 *
 * @throws AppError INVALID_ARGUMENT for malformed JSON or a body that is not a valid response.
 * @example
 * const res = decodeInferResponse(await httpResponse.text());
 * res.outputs[0].data; // Int32Array for an INT32 output
 */
export function decodeInferResponse(json: string | object): InferResponse {
  const body = typeof json === 'string' ? parseResponseText(json) : json;
  const parsed = InferResponseJson.safeParse(body);
  if (!parsed.success) throw new AppError('INVALID_ARGUMENT', zodIssueMessage(parsed.error, body, 'infer response'));
  const { data } = parsed;
  const response: InferResponse = {
    model_name: data.model_name,
    model_version: data.model_version,
    outputs: data.outputs.map((output) =>
      decodeJsonTensor(output, `output '${output.name}'`, { nonFiniteStrings: true }),
    ),
  };
  if (data.id !== undefined) response.id = data.id;
  if (data.parameters !== undefined) response.parameters = data.parameters;
  return response;
}

function parseResponseText(text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `infer response is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  // The exact-integer reviver is several times slower than a plain parse, so it only runs again
  // when a 64-bit integer output actually lost digits.
  return hasInexactInt64(body) ? JSON.parse(text, exactIntegers) : body;
}

function hasInexactInt64(body: unknown): boolean {
  const outputs = (body as { outputs?: unknown } | null)?.outputs;
  if (!Array.isArray(outputs)) return false;
  for (const output of outputs) {
    const { datatype, data } = (output ?? {}) as { datatype?: unknown; data?: unknown };
    if ((datatype === 'INT64' || datatype === 'UINT64') && Array.isArray(data) && someUnsafeInteger(data)) {
      return true;
    }
  }
  return false;
}

/** Iterative, like flattenData's leaf count: nesting depth is up to whoever sent the body. */
function someUnsafeInteger(root: unknown[]): boolean {
  const stack: unknown[][] = [root];
  for (let level = stack.pop(); level !== undefined; level = stack.pop()) {
    for (const value of level) {
      if (Array.isArray(value)) stack.push(value);
      else if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return true;
    }
  }
  return false;
}

/** JSON.parse reviver using source text access (Node ≥ 21) to keep integers beyond 2^53 exact. */
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  const source = context?.source;
  if (typeof value === 'number' && !Number.isSafeInteger(value) && source !== undefined && /^-?\d+$/.test(source)) {
    return BigInt(source);
  }
  return value;
}
