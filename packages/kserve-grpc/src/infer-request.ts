import {
  AppError,
  DATATYPES,
  type Datatype,
  decodeBinaryTensorData,
  elementCount,
  isDatatype,
  type SharedMemoryReader,
  sharedMemoryRefOf,
  type Tensor,
  withoutSharedMemoryParameters,
} from '@nvcf/protocol';
import { decodeParameters, decodeRequestParameters, parameterValue } from './infer-parameters.ts';
import type {
  InferInputTensorMsg,
  InferRequestedOutputTensorMsg,
  Int64,
  ModelInferRequestMsg,
} from './kserve-messages.ts';
import { decodeTypedContents } from './typed-contents.ts';

/** A requested output: its classification count (Triton classification extension) and any other parameters. */
export interface GrpcRequestedOutput {
  name: string;
  /** Classification extension: return the top N classes of this output as BYTES. */
  classification?: number;
  parameters?: Record<string, unknown>;
}

/**
 * A decoded ModelInferRequest, independent of the wire (the worker's core request has this shape).
 * Empty `model_version` and `id` are absent.
 */
export interface GrpcInferRequest {
  modelName: string;
  modelVersion?: string;
  id?: string;
  parameters?: Record<string, unknown>;
  inputs: Tensor[];
  /** Absent: every output of the model. */
  outputs?: GrpcRequestedOutput[];
}

export interface DecodeInferRequestOptions {
  /** Per-input element limit, checked against the shape before anything is allocated. Default 2^28. */
  maxElements?: number;
  /**
   * Reads inputs that name a shared memory region (Triton shared memory extension); without it such an input
   * is refused.
   */
  sharedMemory?: SharedMemoryReader;
}

/**
 * Turns a ModelInferRequest into a decoded request (tensors in the storage `tensor.ts` prescribes). Inputs come either all as `raw_input_contents`
 * (paired with `inputs` by index; the form tritonclient's `set_data_from_numpy` sends) or all as typed
 * `contents`; mixing the two is refused, as Triton does.
 *
 * @throws AppError INVALID_ARGUMENT naming the model and the offending input.
 */
export function decodeModelInferRequest(
  msg: ModelInferRequestMsg,
  opts: DecodeInferRequestOptions = {},
): GrpcInferRequest {
  const model = msg.model_name;
  const raw = msg.raw_input_contents;
  // Inputs in shared memory take no raw_input_contents entry: the others pair with them in order.
  const inShm = msg.inputs.map((input) => Object.hasOwn(input.parameters, 'shared_memory_region'));
  const inBody = inShm.filter((shm) => !shm).length;
  if (raw.length > 0) {
    if (raw.length !== inBody) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `expected ${inBody} inputs but got ${raw.length} raw_input_contents in request for model '${model}'`,
      );
    }
    const typed = msg.inputs.find((input) => input.contents !== null);
    if (typed) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `contents field must not be specified when using raw_input_contents for '${typed.name}' for model '${model}'`,
      );
    }
  }
  const names = new Set<string>();
  let rawIndex = 0;
  const inputs = msg.inputs.map((input, i) => {
    if (names.has(input.name)) throw new AppError('INVALID_ARGUMENT', `duplicate input name '${input.name}'`);
    names.add(input.name);
    if (inShm[i]) return decodeSharedMemoryInput(input, model, opts);
    return decodeInput(input, raw[rawIndex++], opts.maxElements);
  });
  const request: GrpcInferRequest = { modelName: model, inputs };
  if (msg.model_version !== '') request.modelVersion = msg.model_version;
  if (msg.id !== '') request.id = msg.id;
  const parameters = decodeRequestParameters(msg.parameters);
  if (parameters) request.parameters = parameters;
  if (msg.outputs.length > 0) request.outputs = msg.outputs.map(decodeRequestedOutput);
  return request;
}

/** An input's datatype and shape, checked. */
function typeAndShape(input: InferInputTensorMsg, label: string): { datatype: Datatype; shape: number[] } {
  const { datatype } = input;
  if (!isDatatype(datatype)) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: unknown datatype '${datatype}' (expected one of ${DATATYPES.join(', ')})`,
    );
  }
  return { datatype, shape: decodeShape(input.shape, label) };
}

function decodeInput(input: InferInputTensorMsg, raw: Uint8Array | undefined, maxElements: number | undefined): Tensor {
  const label = `input '${input.name}'`;
  const { datatype, shape } = typeAndShape(input, label);
  const data =
    raw !== undefined
      ? decodeBinaryTensorData(datatype, shape, raw, label, maxElements)
      : decodeTypedContents(datatype, shape, elementCount(shape, label, maxElements), input.contents, label);
  const tensor: Tensor = { name: input.name, datatype, shape, data };
  const parameters = decodeParameters(input.parameters);
  if (parameters) tensor.parameters = parameters;
  return tensor;
}

/** An input whose bytes are in a registered region, with Triton's gRPC texts for what is wrong with it. */
function decodeSharedMemoryInput(input: InferInputTensorMsg, model: string, opts: DecodeInferRequestOptions): Tensor {
  const label = `input '${input.name}'`;
  if (input.contents !== null) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `unexpected 'content' provided when using shared memory for input tensor '${input.name}' for model '${model}'`,
    );
  }
  const parameters = decodeParameters(input.parameters) ?? {};
  if (parameters.shared_memory_byte_size === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${input.name}'`,
    );
  }
  const ref = sharedMemoryRefOf(parameters, input.name);
  if (!ref) throw new AppError('INTERNAL', `${label}: no shared memory region`);
  if (!opts.sharedMemory) {
    throw new AppError('INVALID_ARGUMENT', `${label}: shared memory regions are not available here`);
  }
  const { datatype, shape } = typeAndShape(input, label);
  const bytes = opts.sharedMemory(ref, label);
  const tensor: Tensor = {
    name: input.name,
    datatype,
    shape,
    data: decodeBinaryTensorData(datatype, shape, bytes, label, opts.maxElements),
  };
  const rest = withoutSharedMemoryParameters(parameters);
  if (rest) tensor.parameters = rest;
  return tensor;
}

/** int64 dimensions arrive as decimal strings; anything past 2^53 is refused by elementCount anyway. */
function decodeShape(shape: readonly Int64[], label: string): number[] {
  return shape.map((d) => {
    const n = Number(d);
    if (!Number.isSafeInteger(n)) throw new AppError('INVALID_ARGUMENT', `${label}: dimension ${d} is out of range`);
    return n;
  });
}

function decodeRequestedOutput(output: InferRequestedOutputTensorMsg): GrpcRequestedOutput {
  const requested: GrpcRequestedOutput = { name: output.name };
  const rest: Record<string, unknown> = {};
  for (const [key, p] of Object.entries(output.parameters)) {
    if (key === 'classification') {
      requested.classification = classCount(parameterValue(p), output.name);
    } else if (key !== 'binary_data') {
      // binary_data is the HTTP binary extension's switch; gRPC outputs are always raw.
      const value = parameterValue(p);
      if (value !== undefined) rest[key] = value;
    }
  }
  if (Object.keys(rest).length > 0) requested.parameters = rest;
  return requested;
}

function classCount(value: unknown, output: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw new AppError(
    'INVALID_ARGUMENT',
    `output '${output}': 'classification' must be a positive int64_param, got ${String(value)}`,
  );
}
