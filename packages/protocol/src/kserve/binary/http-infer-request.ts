import { AppError } from '../../errors.ts';
import {
  type InferRequest,
  InferRequestJson,
  type ParseInferRequestOptions,
  parseInferRequest,
} from '../infer-request-json.ts';
import { decodeJsonTensor } from '../json-tensor.ts';
import { sharedMemoryRefOf } from '../shared-memory-ref.ts';
import { zodIssueMessage } from '../zod-issue-message.ts';
import { type BinarySection, binaryDataSizeOf, checkFullyConsumed, takeBinaryTensor } from './binary-section.ts';
import { parseInferenceHeaderContentLength, parseJsonSection } from './json-section.ts';
import { decodeRawSingleInput, type RawInputSpec } from './raw-single-input.ts';
import { takeSharedMemoryTensor } from './shared-memory-input.ts';

/** The request headers the body layout depends on. */
export interface InferRequestHeaders {
  /** The `Inference-Header-Content-Length` header as received (absent: the whole body is JSON). */
  inferenceHeaderContentLength?: string | null;
}

export interface DecodeHttpInferRequestOptions extends ParseInferRequestOptions {
  /**
   * The model's only input, for raw single-input requests (`Inference-Header-Content-Length: 0`);
   * leave it out when the model has more than one input, and such a request is refused.
   */
  singleInput?: RawInputSpec;
}

/**
 * Decodes a KServe V2 HTTP infer request body, binary tensor data included (Triton binary data extension):
 * - no `Inference-Header-Content-Length`: the whole body is JSON (`parseInferRequest`);
 * - header N > 0: the first N bytes are JSON, the rest is sliced in JSON order by each input's
 *   `parameters.binary_data_size`, and must be consumed exactly; JSON and binary inputs mix freely;
 * - header 0: the body is the raw data of the model's only input (`decodeRawSingleInput`).
 * `binary_data_size` is removed from the decoded tensors' parameters, so a tensor decodes the same
 * whichever way it travelled. Element counts are checked before anything is allocated; fixed-size and
 * BYTES data may be views of `body` rather than copies.
 *
 * @throws AppError INVALID_ARGUMENT naming the header or the input at fault.
 * @example
 * const req = decodeHttpInferRequest(body, { inferenceHeaderContentLength: c.req.header('inference-header-content-length') });
 */
export function decodeHttpInferRequest(
  body: Uint8Array,
  headers: InferRequestHeaders = {},
  opts: DecodeHttpInferRequestOptions = {},
): InferRequest {
  const headerLength = parseInferenceHeaderContentLength(headers.inferenceHeaderContentLength, body.byteLength);
  if (headerLength === 0) return decodeRawSingleInput(body, opts.singleInput, opts);
  const jsonLength = headerLength ?? body.byteLength;
  const { json } = parseJsonSection(body.subarray(0, jsonLength), 'infer request', headerLength);
  const section: BinarySection = { bytes: body.subarray(jsonLength), offset: 0, hasHeader: headerLength !== undefined };
  // The common case, all JSON, goes through the JSON decoder unchanged.
  if (section.bytes.byteLength === 0 && !hasBinaryInput(json)) return parseInferRequest(json, opts);
  return decodeMixed(json, section, opts);
}

/**
 * Decodes a KServe V2 infer request whose two parts arrive apart: the JSON part as data (parsed where it was
 * received) and the binary tensor data, in input order, that inputs with `parameters.binary_data_size` take
 * their bytes from (Triton binary data extension). The job queue carries a request this way between a gateway
 * and a worker: no HTTP framing, the tensors as raw bytes. The checks are `decodeHttpInferRequest`'s.
 *
 * @throws AppError INVALID_ARGUMENT naming the input at fault.
 */
export function decodeInferRequestParts(
  header: unknown,
  binary: Uint8Array,
  opts: ParseInferRequestOptions = {},
): InferRequest {
  if (binary.byteLength === 0 && !hasBinaryInput(header)) return parseInferRequest(header, opts);
  return decodeMixed(header, { bytes: binary, offset: 0, hasHeader: true }, opts);
}

function hasBinaryInput(body: unknown): boolean {
  const inputs = (body as { inputs?: unknown } | null)?.inputs;
  if (!Array.isArray(inputs)) return false;
  return inputs.some((input) => {
    const parameters = (input as { parameters?: unknown } | null)?.parameters;
    return typeof parameters === 'object' && parameters !== null && Object.hasOwn(parameters, 'binary_data_size');
  });
}

function decodeMixed(body: unknown, section: BinarySection, opts: ParseInferRequestOptions): InferRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('INVALID_ARGUMENT', 'infer request must be a JSON object');
  }
  const rawInputs = (body as { inputs?: unknown }).inputs;
  if (!Array.isArray(rawInputs) || rawInputs.length === 0) {
    throw new AppError('INVALID_ARGUMENT', "infer request must have a non-empty 'inputs' array");
  }
  const parsed = InferRequestJson.safeParse(body);
  if (!parsed.success) throw new AppError('INVALID_ARGUMENT', zodIssueMessage(parsed.error, body, 'infer request'));
  const json = parsed.data;
  const names = new Set<string>();
  for (const input of json.inputs) {
    if (names.has(input.name)) throw new AppError('INVALID_ARGUMENT', `duplicate input name '${input.name}'`);
    names.add(input.name);
  }
  const inputs = json.inputs.map((input) => {
    const label = `input '${input.name}'`;
    const ref = sharedMemoryRefOf(input.parameters, input.name);
    if (ref) return takeSharedMemoryTensor(input, ref, label, opts);
    const size = binaryDataSizeOf(input.parameters, label);
    return size === undefined
      ? decodeJsonTensor(input, label, opts)
      : takeBinaryTensor(input, size, section, label, opts.maxElements);
  });
  checkFullyConsumed(section, 'input');
  const request: InferRequest = { inputs };
  if (json.id !== undefined) request.id = json.id;
  if (json.parameters !== undefined) request.parameters = json.parameters;
  if (json.outputs !== undefined) request.outputs = json.outputs;
  return request;
}
