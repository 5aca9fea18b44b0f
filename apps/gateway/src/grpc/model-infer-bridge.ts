import type { FunctionModelSpec, FunctionVersion } from '@nvcf/control-store';
import type { GrpcInferRequest, GrpcRequestedOutput } from '@nvcf/kserve-grpc';
import {
  AppError,
  encodeInferRequestParts,
  PROBLEM_CONTENT_TYPE,
  problem,
  type RequestedOutputOptions,
  type Tensor,
} from '@nvcf/protocol';
import {
  type InvocationFailure,
  type InvocationInput,
  type InvocationResult,
  MODEL_INFER_RESPONSE_TYPE,
} from '@nvcf/queue';
import { RelayedFunctionError, relayedProblem } from '../invocation/relayed-problem.ts';

declare global {
  interface JSON {
    /** TC39 JSON.parse source text access: Node has it (22+); TypeScript's lib does not declare it yet. */
    rawJSON(text: string): unknown;
  }
}

/** A ModelInfer as a queued invocation: the job's input and the tensors' bytes kept beside the job. */
export interface QueuedInfer {
  input: Extract<InvocationInput, { kind: 'kserve' }>;
  /** Every input's bytes, in input order (`input.binaryBytes` of them). */
  binary: Buffer;
}

/**
 * The function's ONNX model. A container function's server speaks HTTP behind the worker: the KServe gRPC port
 * cannot reach it, and says so.
 */
export function modelOf(fv: FunctionVersion): FunctionModelSpec {
  if (fv.model) return fv.model;
  throw new AppError(
    'UNIMPLEMENTED',
    `function '${fv.id}' is a container function: invoke it over HTTP (pexec); the KServe gRPC port serves model functions`,
  );
}

/**
 * Refuses a request for another model than the function serves, with Triton's texts (the function is
 * one Triton model; a Triton server would refuse the same request). Empty name or version: the function's.
 */
export function checkModel(
  fv: FunctionVersion,
  modelName: string,
  modelVersion: string | undefined,
): FunctionModelSpec {
  const model = modelOf(fv);
  if (modelName !== '' && modelName !== model.name) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Request for unknown model: '${modelName}' is not found (function '${fv.id}' serves '${model.name}')`,
    );
  }
  if (modelVersion !== undefined && modelVersion !== '' && modelVersion !== model.version) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Request for unknown model: '${model.name}' version ${modelVersion} is not at ready state ` +
        `(function version '${fv.versionId}' serves version ${model.version})`,
    );
  }
  return model;
}

/**
 * A decoded ModelInfer as the job's KServe input: its JSON part as data with every input binary and the
 * requested outputs' `classification` kept, and the tensors' bytes apart (kept raw beside the job, never
 * base64 in it). The worker hands both to its core as they are and renders the answer as a
 * ModelInferResponse (`respond: 'kserve-grpc'`).
 *
 * @param opts.maxBodyBytes the body limit pexec applies to the same request (MAX_REQUEST_BODY_BYTES).
 * @throws AppError PAYLOAD_TOO_LARGE (gRPC RESOURCE_EXHAUSTED) for a request over `maxBodyBytes`, before its
 *   bytes are copied into one block.
 */
export function encodeQueuedInfer(req: GrpcInferRequest, opts: { maxBodyBytes?: number } = {}): QueuedInfer {
  const parts = encodeInferRequestParts(
    {
      inputs: req.inputs.map(jsonSafeTensor),
      ...(req.id !== undefined ? { id: req.id } : {}),
      ...(req.parameters !== undefined ? { parameters: jsonSafe(req.parameters) } : {}),
    },
    req.outputs ? { outputs: req.outputs.map(requestedOutput) } : {},
  );
  const binaryBytes = parts.binary.reduce((n, b) => n + b.byteLength, 0);
  // Typed contents can encode larger than they travelled (an int_contents zero is one protobuf byte and
  // four raw ones), so the limit is checked on what would be queued, not on the gRPC message.
  const { maxBodyBytes = Number.POSITIVE_INFINITY } = opts;
  const size = binaryBytes + (binaryBytes > maxBodyBytes ? 0 : Buffer.byteLength(JSON.stringify(parts.header)));
  if (size > maxBodyBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `request body exceeds ${maxBodyBytes} bytes: the inputs encode to ${size} bytes for the function`,
    );
  }
  return {
    input: { kind: 'kserve', header: { ...parts.header }, binaryBytes },
    binary: Buffer.concat(parts.binary, binaryBytes),
  };
}

function requestedOutput(o: GrpcRequestedOutput): RequestedOutputOptions {
  const out: RequestedOutputOptions = { name: o.name };
  if (o.classification !== undefined) out.classification = o.classification;
  return out;
}

function jsonSafeTensor(t: Tensor): Tensor {
  return t.parameters === undefined ? t : { ...t, parameters: jsonSafe(t.parameters) };
}

/**
 * InferParameters may hold 64-bit integers beyond 2^53 as bigint, which JSON.stringify refuses: they are
 * written as their exact digits (JSON.rawJSON), as the JSON path would carry them.
 */
function jsonSafe(params: Record<string, unknown>): Record<string, unknown> {
  if (!Object.values(params).some((v) => typeof v === 'bigint')) return params;
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'bigint' ? JSON.rawJSON(v.toString()) : v]),
  );
}

/**
 * The function's answer as the ModelInferResponse to send: the worker rendered it (`respond: 'kserve-grpc'`),
 * so its bytes go out as they are.
 *
 * @throws AppError for a failure answer (problem+json, or KServe's `{"error"}`) with its `detail` and its
 *   code; INTERNAL for a success that is not a rendered ModelInferResponse.
 */
export function decodeInferResult(result: InvocationResult): Buffer {
  if (!result.ok) throw new AppError(result.code, failureDetail(result));
  if (result.contentType !== MODEL_INFER_RESPONSE_TYPE) {
    throw new AppError(
      'INTERNAL',
      `the function's answer is not a ModelInferResponse (content type '${result.contentType}')`,
    );
  }
  return result.body;
}

/**
 * A function's failure answer as the error a gRPC call ends with: its code, its
 * detail as the message, and the whole problem+json (every NVCF field, `instance` = the RPC's path) for
 * the trailers. A failure body that is not problem+json is described by one.
 */
export function functionFailure(result: InvocationFailure, instance: string, requestId: string): RelayedFunctionError {
  const detail = failureDetail(result);
  const relayed = relayedProblem(result, instance, requestId);
  const body =
    relayed === result && !result.contentType.toLowerCase().startsWith(PROBLEM_CONTENT_TYPE)
      ? Buffer.from(
          JSON.stringify(problem(result.status, detail, { source: 'inference-service', instance, requestId })),
        )
      : relayed.body;
  return new RelayedFunctionError(result.code, detail, body, requestId);
}

/** problem+json `detail`, KServe `{"error"}`, or a short text; never more than 4 KiB of it. */
function failureDetail(result: InvocationResult): string {
  const fallback = `the function answered HTTP ${result.status}`;
  if (result.body.byteLength === 0) return fallback;
  const text = result.body.subarray(0, 64 * 1024).toString('utf8');
  try {
    const json = JSON.parse(text) as { detail?: unknown; error?: unknown };
    const detail = typeof json.detail === 'string' ? json.detail : typeof json.error === 'string' ? json.error : '';
    if (detail) return detail.slice(0, 4096);
  } catch {
    // Not JSON: the fixed text below.
  }
  return fallback;
}
