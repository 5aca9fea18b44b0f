import { AppError } from '../../errors.ts';
import { formatShape } from '../element-count.ts';
import { encodeJsonValues } from '../encode-json-values.ts';
import {
  decodeInferResponse,
  encodeInferResponse,
  type InferResponse,
  InferResponseJson,
} from '../infer-response-json.ts';
import { decodeJsonTensor } from '../json-tensor.ts';
import type { Tensor } from '../tensor.ts';
import { zodIssueMessage } from '../zod-issue-message.ts';
import {
  type BinarySection,
  binaryDataSizeOf,
  checkFullyConsumed,
  takeBinaryTensor,
  withoutBinaryDataSize,
} from './binary-section.ts';
import { encodeBinaryTensorData } from './binary-tensor-data.ts';
import { parseInferenceHeaderContentLength, parseJsonSection } from './json-section.ts';
import { checkTensorStorage } from './raw-tensor.ts';

export interface EncodeHttpInferResponseOptions {
  /** The request's `parameters.binary_data_output`: every output binary unless overridden. */
  binaryDataOutput?: boolean;
  /** Each requested output's `parameters.binary_data`, by name; overrides `binaryDataOutput`. */
  outputBinary?: ReadonlyMap<string, boolean>;
  /** The request was raw single-input (`Inference-Header-Content-Length: 0`): every output binary. */
  rawSingleInput?: boolean;
  /**
   * Outputs whose data went to a shared memory region (Triton shared memory extension): they are listed with
   * their name, datatype and shape only, no data and no parameters.
   */
  inSharedMemory?: ReadonlySet<string>;
}

/** A response body ready to send, with the headers that describe its layout. */
export interface HttpInferResponseBody {
  body: Buffer;
  /** `application/octet-stream` when any output is binary, else `application/json`. */
  contentType: string;
  /** The JSON part's byte length, to send as `Inference-Header-Content-Length`; only with binary outputs. */
  inferenceHeaderContentLength?: number;
}

/**
 * Encodes an infer response for HTTP with binary tensor data (Triton binary data extension): binary
 * outputs get `parameters.binary_data_size` and no `data`, and their bytes follow the JSON in output
 * order. A response with no binary output is plain `encodeInferResponse` JSON.
 *
 * @throws AppError INVALID_ARGUMENT for an output JSON cannot carry (BF16, BYTES that are not
 *   UTF-8) when JSON was asked for; INTERNAL when an output's data does not match its datatype or shape.
 * @example
 * const out = encodeHttpInferResponse(res, { binaryDataOutput: true });
 * reply.header('content-type', out.contentType);
 * if (out.inferenceHeaderContentLength !== undefined) reply.header('inference-header-content-length', String(out.inferenceHeaderContentLength));
 */
export function encodeHttpInferResponse(
  res: InferResponse,
  opts: EncodeHttpInferResponseOptions = {},
): HttpInferResponseBody {
  const shm = opts.inSharedMemory ?? new Set<string>();
  const binary = res.outputs.map(
    (o) =>
      !shm.has(o.name) &&
      (opts.rawSingleInput === true || (opts.outputBinary?.get(o.name) ?? opts.binaryDataOutput ?? false)),
  );
  res.outputs.forEach((output, i) => {
    if (!binary[i] && !shm.has(output.name) && output.datatype === 'BF16') {
      throw new AppError(
        'INVALID_ARGUMENT',
        `output '${output.name}': BF16 tensors cannot be returned as JSON; request the output with ` +
          `"binary_data": true (or the request with "binary_data_output": true)`,
      );
    }
  });
  const outputs = res.outputs.map(withoutStaleSize);
  if (!binary.includes(true) && shm.size === 0) {
    return { body: Buffer.from(encodeInferResponse({ ...res, outputs })), contentType: 'application/json' };
  }
  const blobs: Uint8Array[] = [];
  const parts = outputs.map((output, i) => {
    const label = `output '${output.name}'`;
    const head = `{"name":${JSON.stringify(output.name)},"datatype":"${output.datatype}","shape":${formatShape(output.shape)}`;
    if (shm.has(output.name)) return `${head}}`;
    if (binary[i]) {
      const blob = encodeBinaryTensorData(output.datatype, output.shape, output.data, label);
      blobs.push(blob);
      return `${head},"parameters":${JSON.stringify({ ...output.parameters, binary_data_size: blob.byteLength })}}`;
    }
    checkTensorStorage(output.datatype, output.shape, output.data, label);
    const parameters = output.parameters === undefined ? '' : `,"parameters":${JSON.stringify(output.parameters)}`;
    return `${head}${parameters},"data":${encodeJsonValues(output.datatype, output.data, label)}}`;
  });
  let json = `{"model_name":${JSON.stringify(res.model_name)},"model_version":${JSON.stringify(res.model_version)}`;
  if (res.id !== undefined) json += `,"id":${JSON.stringify(res.id)}`;
  if (res.parameters !== undefined) json += `,"parameters":${JSON.stringify(res.parameters)}`;
  const head = Buffer.from(`${json},"outputs":[${parts.join(',')}]}`);
  if (blobs.length === 0) return { body: head, contentType: 'application/json' };
  return {
    body: Buffer.concat([head, ...blobs]),
    contentType: 'application/octet-stream',
    inferenceHeaderContentLength: head.byteLength,
  };
}

/** A `binary_data_size` left in an output's parameters would describe bytes that are not there. */
function withoutStaleSize(output: Tensor): Tensor {
  if (output.parameters === undefined || !Object.hasOwn(output.parameters, 'binary_data_size')) return output;
  const { parameters: _, ...rest } = output;
  const parameters = withoutBinaryDataSize(output.parameters);
  return parameters === undefined ? rest : { ...rest, parameters };
}

/**
 * Decodes an HTTP infer response body, JSON or JSON + binary (the client side of the Triton binary data
 * extension): without the header the whole body is JSON; with it the first N bytes are JSON and each
 * output with `binary_data_size` takes its bytes in order. The inverse of `encodeHttpInferResponse`; for tests,
 * benchmarks and the SDK. INT64/UINT64 JSON values beyond 2^53 keep their exact digits.
 *
 * @param inferenceHeaderContentLength the response's `Inference-Header-Content-Length`, if any.
 * @throws AppError INVALID_ARGUMENT for a malformed body, naming the output at fault.
 * @example
 * const res = decodeHttpInferResponse(new Uint8Array(await r.arrayBuffer()), r.headers.get('inference-header-content-length'));
 */
export function decodeHttpInferResponse(
  body: Uint8Array,
  inferenceHeaderContentLength?: number | string | null,
): InferResponse {
  const header =
    typeof inferenceHeaderContentLength === 'number'
      ? String(inferenceHeaderContentLength)
      : inferenceHeaderContentLength;
  const headerLength = parseInferenceHeaderContentLength(header, body.byteLength, 'response');
  const jsonLength = headerLength ?? body.byteLength;
  const { text, json: plain } = parseJsonSection(body.subarray(0, jsonLength), 'infer response', headerLength);
  if (headerLength === undefined) return decodeInferResponse(text);
  const json = hasJsonInt64Output(plain) ? JSON.parse(text, exactIntegers) : plain;
  const parsed = InferResponseJson.safeParse(json);
  if (!parsed.success) throw new AppError('INVALID_ARGUMENT', zodIssueMessage(parsed.error, json, 'infer response'));
  const section: BinarySection = { bytes: body.subarray(jsonLength), offset: 0, hasHeader: true };
  const outputs = parsed.data.outputs.map((output) => {
    const label = `output '${output.name}'`;
    const size = binaryDataSizeOf(output.parameters, label);
    return size === undefined
      ? decodeJsonTensor(output, label, { nonFiniteStrings: true })
      : takeBinaryTensor(output, size, section, label);
  });
  checkFullyConsumed(section, 'output');
  const response: InferResponse = {
    model_name: parsed.data.model_name,
    model_version: parsed.data.model_version,
    outputs,
  };
  if (parsed.data.id !== undefined) response.id = parsed.data.id;
  if (parsed.data.parameters !== undefined) response.parameters = parsed.data.parameters;
  return response;
}

/** Whether a 64-bit integer output travels as JSON numbers, which JSON.parse may have rounded. */
function hasJsonInt64Output(body: unknown): boolean {
  const outputs = (body as { outputs?: unknown } | null)?.outputs;
  if (!Array.isArray(outputs)) return false;
  return outputs.some((output) => {
    const { datatype, data } = (output ?? {}) as { datatype?: unknown; data?: unknown };
    return (datatype === 'INT64' || datatype === 'UINT64') && data !== undefined;
  });
}

/** JSON.parse reviver using source text access (Node ≥ 21) to keep integers beyond 2^53 exact. */
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  const source = context?.source;
  if (typeof value === 'number' && !Number.isSafeInteger(value) && source !== undefined && /^-?\d+$/.test(source)) {
    return BigInt(source);
  }
  return value;
}
