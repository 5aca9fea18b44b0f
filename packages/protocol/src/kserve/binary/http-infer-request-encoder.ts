import { AppError } from '../../errors.ts';
import { formatShape } from '../element-count.ts';
import { encodeJsonValues } from '../encode-json-values.ts';
import type { InferRequest } from '../infer-request-json.ts';
import type { Tensor } from '../tensor.ts';
import { withoutBinaryDataSize } from './binary-section.ts';
import { encodeBinaryTensorData } from './binary-tensor-data.ts';
import { checkTensorStorage } from './raw-tensor.ts';

/** A requested output with the two parameters clients set on it (Triton binary data and classification extensions). */
export interface RequestedOutputOptions {
  name: string;
  /** Return this output binary (`parameters.binary_data`). */
  binary_data?: boolean;
  /** Return the top N classes instead of the tensor (`parameters.classification`). */
  classification?: number;
}

export interface EncodeHttpInferRequestOptions {
  /** Which inputs travel binary: all (`true`), none (`false`, the default) or those named. */
  binaryInputs?: boolean | ReadonlySet<string>;
  /** Sets the request's `parameters.binary_data_output`. */
  binaryDataOutput?: boolean;
  /** Replaces `req.outputs` with outputs carrying these parameters. */
  outputs?: readonly RequestedOutputOptions[];
}

/** A request body and the `Inference-Header-Content-Length` to send with it (absent: all JSON). */
export interface HttpInferRequestBody {
  body: Buffer;
  inferenceHeaderContentLength?: number;
}

/**
 * Encodes an infer request the way `tritonclient.http` does: JSON, with any chosen inputs moved to
 * the binary part (`parameters.binary_data_size`, bytes after the JSON in input order). The client
 * side of `decodeHttpInferRequest`, for tests, benchmarks and the SDK.
 *
 * JSON inputs carry what JSON can: BF16 and BYTES that are not UTF-8 must be binary, and non-finite
 * floats are written as strings that servers refuse in requests (send those binary too).
 *
 * @throws AppError INVALID_ARGUMENT for a JSON input JSON cannot carry; INTERNAL for storage that
 *   does not match its datatype or shape.
 * @example
 * const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(req, { binaryInputs: true, binaryDataOutput: true });
 */
export function encodeHttpInferRequest(
  req: InferRequest,
  opts: EncodeHttpInferRequestOptions = {},
): HttpInferRequestBody {
  const { binaryInputs = false } = opts;
  const isBinary = (name: string) => (typeof binaryInputs === 'boolean' ? binaryInputs : binaryInputs.has(name));
  const blobs: Uint8Array[] = [];
  const inputs = req.inputs.map((input) => {
    const label = `input '${input.name}'`;
    const head = `{"name":${JSON.stringify(input.name)},"datatype":"${input.datatype}","shape":${formatShape(input.shape)}`;
    const parameters = withoutBinaryDataSize(input.parameters);
    if (isBinary(input.name)) {
      const blob = encodeBinaryTensorData(input.datatype, input.shape, input.data, label);
      blobs.push(blob);
      return `${head},"parameters":${JSON.stringify({ ...parameters, binary_data_size: blob.byteLength })}}`;
    }
    if (input.datatype === 'BF16') {
      throw new AppError('INVALID_ARGUMENT', `${label}: BF16 inputs have no JSON form; send them binary`);
    }
    checkTensorStorage(input.datatype, input.shape, input.data, label);
    return `${head}${parametersField(parameters)},"data":${encodeJsonValues(input.datatype, input.data, label)}}`;
  });

  let json = '{';
  if (req.id !== undefined) json += `"id":${JSON.stringify(req.id)},`;
  const parameters =
    opts.binaryDataOutput === undefined
      ? req.parameters
      : { ...req.parameters, binary_data_output: opts.binaryDataOutput };
  if (parameters !== undefined) json += `"parameters":${JSON.stringify(parameters)},`;
  json += `"inputs":[${inputs.join(',')}]`;
  const outputs = opts.outputs?.map(requestedOutput) ?? req.outputs;
  if (outputs !== undefined) json += `,"outputs":${JSON.stringify(outputs)}`;
  const head = Buffer.from(`${json}}`);
  if (blobs.length === 0) return { body: head };
  return { body: Buffer.concat([head, ...blobs]), inferenceHeaderContentLength: head.byteLength };
}

/** An infer request in two parts: its JSON part as data and its inputs' binary data, in input order. */
export interface InferRequestParts {
  header: InferRequestHeader;
  binary: Uint8Array[];
}

/** The JSON part of a request whose inputs all travel binary (`encodeInferRequestParts`). */
export interface InferRequestHeader {
  id?: string;
  parameters?: Record<string, unknown>;
  inputs: { name: string; datatype: string; shape: number[]; parameters: Record<string, unknown> }[];
  outputs?: { name: string; parameters?: Record<string, unknown> }[];
}

/**
 * The request as `decodeInferRequestParts` takes it: every input binary, its bytes apart from the JSON part
 * (no HTTP framing, no copy into one body). What a gateway queues for a worker.
 *
 * @throws AppError INTERNAL for storage that does not match its datatype or shape.
 */
export function encodeInferRequestParts(
  req: InferRequest,
  opts: Pick<EncodeHttpInferRequestOptions, 'binaryDataOutput' | 'outputs'> = {},
): InferRequestParts {
  const binary: Uint8Array[] = [];
  const inputs = req.inputs.map((input) => {
    const blob = encodeBinaryTensorData(input.datatype, input.shape, input.data, `input '${input.name}'`);
    binary.push(blob);
    const parameters = { ...withoutBinaryDataSize(input.parameters), binary_data_size: blob.byteLength };
    return { name: input.name, datatype: input.datatype, shape: [...input.shape], parameters };
  });
  const header: InferRequestHeader = { inputs };
  if (req.id !== undefined) header.id = req.id;
  const parameters =
    opts.binaryDataOutput === undefined
      ? req.parameters
      : { ...req.parameters, binary_data_output: opts.binaryDataOutput };
  if (parameters !== undefined) header.parameters = parameters;
  const outputs = opts.outputs?.map(requestedOutput) ?? req.outputs;
  if (outputs !== undefined) header.outputs = outputs;
  return { header, binary };
}

function parametersField(parameters: Tensor['parameters']): string {
  return parameters === undefined ? '' : `,"parameters":${JSON.stringify(parameters)}`;
}

function requestedOutput(output: RequestedOutputOptions): { name: string; parameters?: Record<string, unknown> } {
  const parameters: Record<string, unknown> = {};
  if (output.binary_data !== undefined) parameters.binary_data = output.binary_data;
  if (output.classification !== undefined) parameters.classification = output.classification;
  return Object.keys(parameters).length > 0 ? { name: output.name, parameters } : { name: output.name };
}
