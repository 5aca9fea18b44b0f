import { apiDatatype, type ModelConfig, type ModelInputConfig } from '@nvcf/models';
import {
  AppError,
  DATATYPE_BYTE_SIZE,
  type Datatype,
  decodeBinaryTensorData,
  elementCount,
  formatShape,
  type Tensor,
} from '@nvcf/protocol';
import type { CoreInferRequest, RequestedOutput } from '../core/core-types.ts';
import {
  FLAG_SEQUENCE_END,
  FLAG_SEQUENCE_START,
  type InferRequestHeaderMsg,
  type RequestInputMsg,
} from './v1-messages.ts';

/** A v1 request mapped onto the core, plus what the response needs to know. */
export interface V1InferPlan {
  request: CoreInferRequest;
  batchSize: number;
  /** Whether the model batches: shapes carry the batch dimension first. */
  batching: boolean;
  /** The requested outputs in order; `classes` set for `cls { count }` outputs. */
  outputs: { name: string; classes?: number }[];
}

/** The raw input bytes: one HTTP body holding every input in header order, or gRPC's one entry per input. */
export type V1RawInputs = Uint8Array | readonly Uint8Array[];

const invalid = (message: string) => new AppError('INVALID_ARGUMENT', message);

/**
 * Maps an InferRequestHeader and its raw input bytes onto a core request (TRTIS 1.x API): shape =
 * `[batch_size] + dims` when the model batches, dims from the header or (all fixed) the model config; each input's
 * bytes cut from the body in header order and checked against `batch_byte_size`; STRING inputs as 4-byte
 * length-prefixed elements; `cls { count }` outputs through the core's classification.
 *
 * @throws AppError INVALID_ARGUMENT naming the input or output at fault; UNIMPLEMENTED for shared memory.
 */
export function decodeV1InferRequest(
  config: ModelConfig,
  model: { name: string; version?: string },
  header: InferRequestHeaderMsg,
  raw: V1RawInputs,
  maxElements: number,
): V1InferPlan {
  const batching = config.max_batch_size > 0;
  const batchSize = checkBatchSize(header.batch_size ?? 0, config.max_batch_size, model.name);
  const inputs = header.input ?? [];
  checkInputNames(config, inputs, model.name);

  // Sizes first: a body that is too short or too long is reported once, with every input's share.
  const specs = inputs.map((input) => inputSpec(config, input, batchSize, batching, maxElements));
  const slices = sliceInputs(raw, specs);
  const tensors: Tensor[] = specs.map((s, i) => ({
    name: s.name,
    datatype: s.datatype,
    shape: s.shape,
    data: decodeBinaryTensorData(s.datatype, s.shape, slices[i] as Uint8Array, s.label, maxElements),
  }));

  const outputs = requestedOutputs(config, header, model.name);
  const request: CoreInferRequest = {
    modelName: model.name,
    ...(model.version !== undefined ? { modelVersion: model.version } : {}),
    ...(header.id !== undefined ? { id: String(header.id) } : {}),
    inputs: tensors,
  };
  const parameters = requestParameters(header);
  if (parameters) request.parameters = parameters;
  // No outputs requested: v1 returns none; the core still runs the model (on all of them).
  if (outputs.length) {
    request.outputs = outputs.map(
      (o): RequestedOutput => ({
        name: o.name,
        ...(o.classes !== undefined ? { classification: o.classes } : {}),
      }),
    );
  }
  return { request, batchSize, batching, outputs };
}

function checkBatchSize(batch: number, max: number, model: string): number {
  if (batch < 1) throw invalid(`inference request batch-size must be >= 1 for '${model}', got ${batch}`);
  if (max === 0 && batch !== 1) {
    throw invalid(`inference request batch-size must be 1 for '${model}', which does not support batching`);
  }
  if (max > 0 && batch > max) throw invalid(`inference request batch-size must be <= ${max} for '${model}'`);
  return batch;
}

function checkInputNames(config: ModelConfig, inputs: RequestInputMsg[], model: string): void {
  const seen = new Set<string>();
  for (const input of inputs) {
    const name = input.name ?? '';
    if (input.shared_memory) throw sharedMemory(`input '${name}'`);
    if (!config.input.some((i) => i.name === name)) {
      throw invalid(`unexpected inference input '${name}' for model '${model}'`);
    }
    if (seen.has(name)) throw invalid(`input '${name}' is given more than once in the request header`);
    seen.add(name);
  }
  const missing = config.input.filter((i) => !i.optional && !seen.has(i.name)).map((i) => `'${i.name}'`);
  if (missing.length) {
    throw invalid(
      `expected ${config.input.length} inputs but got ${inputs.length} inputs for model '${model}': missing ${missing.join(', ')}`,
    );
  }
}

interface InputSpec {
  name: string;
  label: string;
  datatype: Datatype;
  shape: number[];
  byteSize: number;
}

function inputSpec(
  config: ModelConfig,
  input: RequestInputMsg,
  batch: number,
  batching: boolean,
  maxElements: number,
): InputSpec {
  const spec = config.input.find((i) => i.name === input.name) as ModelInputConfig;
  const label = `input '${spec.name}'`;
  const datatype = apiDatatype(spec.data_type);
  if (!datatype) throw new AppError('INTERNAL', `${label}: the model config gives no data type`);
  const dims = inputDims(spec, input.dims, label);
  const shape = batching ? [batch, ...dims] : dims;
  const count = elementCount(shape, label, maxElements);
  const given = input.batch_byte_size ?? (input.byte_size !== undefined ? input.byte_size * batch : undefined);
  const elementSize = DATATYPE_BYTE_SIZE[datatype];
  if (elementSize === undefined) {
    // STRING: the size cannot be known from the shape, so the header must say it.
    if (given === undefined && count > 0) throw invalid(`${label}: batch_byte_size is required for STRING inputs`);
    return { name: spec.name, label, datatype, shape, byteSize: given ?? 0 };
  }
  const byteSize = count * elementSize;
  if (given !== undefined && given !== byteSize) {
    throw invalid(
      `${label}: batch_byte_size ${given} does not match the ${byteSize} bytes that shape ${formatShape(shape)} of ${datatype} needs`,
    );
  }
  return { name: spec.name, label, datatype, shape, byteSize };
}

/** The header's dims (without batch) where given; else the config's, which must then be fixed. */
function inputDims(spec: ModelInputConfig, given: number[] | undefined, label: string): number[] {
  const configured = spec.dims;
  if (!given?.length) {
    if (configured.some((d) => d < 0)) {
      throw invalid(
        `${label}: the model config has variable dims ${formatShape(configured)}; the request header must give 'dims'`,
      );
    }
    return [...configured];
  }
  const fits = given.length === configured.length && given.every((d, i) => configured[i]! < 0 || configured[i] === d);
  if (!fits || given.some((d) => d < 0)) {
    throw invalid(
      `${label}: dims ${formatShape(given)} do not match the model config's dims ${formatShape(configured)}`,
    );
  }
  return [...given];
}

function sliceInputs(raw: V1RawInputs, specs: InputSpec[]): Uint8Array[] {
  if (!(raw instanceof Uint8Array)) {
    if (raw.length !== specs.length) {
      throw invalid(`expected ${specs.length} raw_input entries (one per meta_data input), got ${raw.length}`);
    }
    return specs.map((s, i) => {
      const bytes = raw[i] as Uint8Array;
      if (bytes.byteLength !== s.byteSize) {
        throw invalid(`raw_input[${i}] (${s.label}) has ${bytes.byteLength} bytes, expected ${s.byteSize}`);
      }
      return bytes;
    });
  }
  const total = specs.reduce((sum, s) => sum + s.byteSize, 0);
  if (raw.byteLength !== total) {
    const parts = specs.map((s) => `${s.name} ${s.byteSize}`).join(' + ');
    throw invalid(
      `the request body has ${raw.byteLength} bytes, but the NV-InferRequest inputs need ${total}${parts ? ` (${parts})` : ''}`,
    );
  }
  let offset = 0;
  return specs.map((s) => {
    const slice = raw.subarray(offset, offset + s.byteSize);
    offset += s.byteSize;
    return slice;
  });
}

function requestedOutputs(config: ModelConfig, header: InferRequestHeaderMsg, model: string): V1InferPlan['outputs'] {
  const seen = new Set<string>();
  return (header.output ?? []).map((o) => {
    const name = o.name ?? '';
    if (o.shared_memory) throw sharedMemory(`output '${name}'`);
    if (!config.output.some((c) => c.name === name)) {
      throw invalid(`unexpected inference output '${name}' for model '${model}'`);
    }
    if (seen.has(name)) throw invalid(`output '${name}' is requested more than once`);
    seen.add(name);
    if (!o.cls) return { name };
    const count = o.cls.count ?? 0;
    if (count < 1) throw invalid(`output '${name}': cls.count must be at least 1`);
    return { name, classes: count };
  });
}

/** correlation_id / flags / priority / timeout as the core's request parameters (Triton parameters extension). */
function requestParameters(header: InferRequestHeaderMsg): Record<string, unknown> | undefined {
  const p: Record<string, unknown> = {};
  const flags = header.flags ?? 0;
  if (header.correlation_id) p.sequence_id = header.correlation_id;
  if (flags & FLAG_SEQUENCE_START) p.sequence_start = true;
  if (flags & FLAG_SEQUENCE_END) p.sequence_end = true;
  if (header.priority) p.priority = header.priority;
  if (header.timeout_microseconds) p.timeout = header.timeout_microseconds;
  return Object.keys(p).length ? p : undefined;
}

function sharedMemory(what: string): AppError {
  return new AppError('UNIMPLEMENTED', `${what}: shared memory is not supported by this server`);
}
