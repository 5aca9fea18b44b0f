import {
  AppError,
  decodeHttpInferRequest,
  decodeInferRequestParts,
  type InferRequest,
  parseInferRequest,
  type SharedMemoryRef,
  sharedMemoryRefOf,
} from '@nvcf/protocol';
import type { CoreInferRequest, InferenceCore, RequestedOutput } from '../core/core-types.ts';
import type { SystemSharedMemory } from '../shm/system-shared-memory.ts';

/** The model a call addresses: no version means the latest ready one. */
export interface ModelRef {
  name: string;
  version?: string;
}

/**
 * An infer body as it arrived: raw bytes (HTTP, or a queued binary request), already-parsed JSON (queue), or
 * a request queued in its two parts (`decodeInferRequestParts`: the JSON part as data, the tensors' bytes).
 */
export type InferBody = Uint8Array | { json: unknown } | { header: unknown; binary: Uint8Array };

/** A decoded HTTP infer request plus how its response must be laid out. */
export interface InferCall {
  request: CoreInferRequest;
  /** Request-level `binary_data_output`. */
  binaryDataOutput: boolean;
  /** Per-output `binary_data`, where given. */
  outputBinary: Map<string, boolean>;
  /** `Inference-Header-Content-Length: 0`: every output is answered binary. */
  rawSingleInput: boolean;
  /** Requested outputs to be written into shared memory regions (Triton shared memory extension), by name. */
  outputShm?: Map<string, SharedMemoryRef>;
  /** The regions they and shared memory inputs name. */
  sharedMemory?: SystemSharedMemory;
}

/**
 * Decodes an infer body (JSON, JSON + binary, or raw single-input; Triton binary data extension) and
 * reads the binary and classification extension parameters (Triton binary data and classification
 * extensions) into the core's request. The HTTP route and the worker's queue (pexec) path both decode
 * here, so they accept the same forms.
 *
 * @throws AppError INVALID_ARGUMENT for anything malformed, naming the part at fault.
 */
export function decodeInferCall(
  core: InferenceCore,
  model: ModelRef,
  body: InferBody,
  inferenceHeaderContentLength: string | undefined,
  maxElements: number,
  sharedMemory?: SystemSharedMemory,
): InferCall {
  const shm = sharedMemory
    ? { sharedMemory: (ref: SharedMemoryRef, label: string) => sharedMemory.read(ref, label) }
    : {};
  // Raw mode needs the model's only input; ask the core only then (it throws for unknown models).
  const raw = inferenceHeaderContentLength !== undefined && /^\s*0+\s*$/.test(inferenceHeaderContentLength);
  const single = raw ? core.singleInput(model.name, model.version) : undefined;
  const decoded =
    body instanceof Uint8Array
      ? decodeHttpInferRequest(
          body,
          { inferenceHeaderContentLength },
          {
            maxElements,
            ...shm,
            ...(single ? { singleInput: { ...single, batched: core.modelBatches(model.name) } } : {}),
          },
        )
      : 'json' in body
        ? parseInferRequest(body.json, { maxElements })
        : decodeInferRequestParts(body.header, body.binary, { maxElements });
  const parameters = decoded.parameters;
  checkRequestParameters(parameters);
  const binaryDataOutput = booleanParameter(parameters, 'binary_data_output', 'infer request') ?? false;
  const outputBinary = new Map<string, boolean>();
  const request: CoreInferRequest = {
    modelName: model.name,
    ...(model.version !== undefined ? { modelVersion: model.version } : {}),
    ...(decoded.id !== undefined ? { id: decoded.id } : {}),
    ...(parameters !== undefined ? { parameters } : {}),
    inputs: decoded.inputs,
  };
  const outputShm = new Map<string, SharedMemoryRef>();
  if (decoded.outputs !== undefined) request.outputs = requestedOutputs(decoded.outputs, outputBinary, outputShm);
  if (outputShm.size > 0 && !sharedMemory) {
    const [name] = outputShm.keys();
    throw new AppError(
      'INVALID_ARGUMENT',
      `output '${name}': shared memory regions are not available here; leave 'shared_memory_region' out`,
    );
  }
  return {
    request,
    binaryDataOutput,
    outputBinary,
    rawSingleInput: raw,
    ...(outputShm.size > 0 ? { outputShm } : {}),
    ...(sharedMemory ? { sharedMemory } : {}),
  };
}

function requestedOutputs(
  outputs: NonNullable<InferRequest['outputs']>,
  binary: Map<string, boolean>,
  shm: Map<string, SharedMemoryRef>,
): RequestedOutput[] {
  const seen = new Set<string>();
  return outputs.map((o) => {
    const label = `output '${o.name}'`;
    if (seen.has(o.name)) throw new AppError('INVALID_ARGUMENT', `duplicate requested output name '${o.name}'`);
    seen.add(o.name);
    const wantsBinary = booleanParameter(o.parameters, 'binary_data', label);
    if (wantsBinary !== undefined) binary.set(o.name, wantsBinary);
    const classification = classCount(o.parameters, label);
    const ref = sharedMemoryRefOf(o.parameters, o.name);
    if (ref) {
      // Triton's texts (Triton shared memory extension: an output goes to a region, or in the body).
      if (wantsBinary === true)
        throw new AppError('INVALID_ARGUMENT', "Output can't set both 'shared_memory_region' and 'binary_data'");
      if (classification !== undefined) {
        throw new AppError('INVALID_ARGUMENT', "Output can't set both 'shared_memory_region' and 'classification'");
      }
      shm.set(o.name, ref);
    }
    const out: RequestedOutput = { name: o.name };
    if (classification !== undefined) out.classification = classification;
    if (o.parameters !== undefined) out.parameters = o.parameters;
    return out;
  });
}

/** Triton reserves `triton_`-prefixed request parameters for itself (Triton parameters extension). */
function checkRequestParameters(parameters: Record<string, unknown> | undefined): void {
  for (const key of Object.keys(parameters ?? {})) {
    if (key.startsWith('triton_')) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified ('${key}')`,
      );
    }
  }
}

function booleanParameter(
  parameters: Record<string, unknown> | undefined,
  key: string,
  label: string,
): boolean | undefined {
  const value = parameters?.[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    throw new AppError('INVALID_ARGUMENT', `${label}: '${key}' must be a boolean, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * `classification: N` (Triton classification extension): a non-negative integer; 0 means no classification,
 * as tritonclient's class_count.
 */
function classCount(parameters: Record<string, unknown> | undefined, label: string): number | undefined {
  const value = parameters?.classification;
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: 'classification' must be a non-negative integer class count, got ${JSON.stringify(value)}`,
    );
  }
  return value === 0 ? undefined : value;
}
