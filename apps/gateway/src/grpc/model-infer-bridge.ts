import {
  encodeModelInferResponse,
  type GrpcInferRequest,
  type GrpcRequestedOutput,
  type ModelInferResponseMsg,
} from '@nvcf/kserve-grpc';
import {
  AppError,
  decodeHttpInferResponse,
  encodeHttpInferRequest,
  type InferRequest,
  PROBLEM_CONTENT_TYPE,
  problem,
  type RequestedOutputOptions,
  type Tensor,
} from '@nvcf/protocol';
import type { FunctionVersion, InvocationInput, InvocationResult } from '@nvcf/queue';
import { RelayedFunctionError, relayedProblem } from '../invocation/relayed-problem.ts';
import { errorCodeOfHttpStatus } from './grpc-status.ts';

/** The header that tells the worker the body is KServe's binary tensor extension (JSON, then raw bytes). */
export const BINARY_HEADER = 'inference-header-content-length';

/** A ModelInfer as a queued invocation: the job's input and the headers the worker reads. */
export interface QueuedInfer {
  input: InvocationInput;
  headers: Record<string, string>;
}

/**
 * Refuses a request for another model than the function serves, with Triton's texts (the function is
 * one Triton model; a Triton server would refuse the same request). Empty name or version: the function's.
 */
export function checkModel(fv: FunctionVersion, modelName: string, modelVersion: string | undefined): void {
  const { model } = fv;
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
}

/**
 * Encodes a decoded ModelInfer as the HTTP request form the worker's queue processor accepts: the binary
 * tensor extension with every input binary and every output asked binary (`binary_data_output`), the
 * requested outputs' `classification` kept. The body travels base64 in the job (the job contract's
 * form for non-JSON bodies) and `inference-header-content-length` says where its JSON part ends.
 *
 * @param headers the client's forwarded metadata; the binary header is set over any client value.
 * @param opts.maxBodyBytes the body limit pexec applies to the same request (MAX_REQUEST_BODY_BYTES).
 * @throws AppError PAYLOAD_TOO_LARGE (gRPC RESOURCE_EXHAUSTED) for a body over `maxBodyBytes`, before it is
 *   copied into the job.
 */
export function encodeQueuedInfer(
  req: GrpcInferRequest,
  headers: Record<string, string> = {},
  opts: { maxBodyBytes?: number } = {},
): QueuedInfer {
  const http: InferRequest = { inputs: req.inputs.map(jsonSafeTensor) };
  if (req.id !== undefined) http.id = req.id;
  if (req.parameters !== undefined) http.parameters = jsonSafe(req.parameters);
  const outputs = req.outputs?.map(requestedOutput);
  const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(http, {
    binaryInputs: true,
    binaryDataOutput: true,
    ...(outputs ? { outputs } : {}),
  });
  // Typed contents can encode larger than they travelled (an int_contents zero is one protobuf byte and
  // four raw ones), so the limit is checked on what would be queued, not on the gRPC message.
  const { maxBodyBytes = Number.POSITIVE_INFINITY } = opts;
  if (body.byteLength > maxBodyBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `request body exceeds ${maxBodyBytes} bytes: the inputs encode to ${body.byteLength} bytes for the function`,
    );
  }
  return {
    input: { kind: 'bytes', contentType: 'application/octet-stream', base64: body.toString('base64') },
    // No binary part at all (no inputs): the whole body is the JSON part, and the worker says what is wrong.
    headers: { ...headers, [BINARY_HEADER]: String(inferenceHeaderContentLength ?? body.byteLength) },
  };
}

function requestedOutput(o: GrpcRequestedOutput): RequestedOutputOptions {
  const out: RequestedOutputOptions = { name: o.name, binary_data: true };
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
  // Node has JSON.rawJSON (TC39 JSON.parse source text access); TypeScript's lib does not declare it yet.
  const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'bigint' ? rawJSON(v.toString()) : v]),
  );
}

/**
 * The function's answer as a ModelInferResponse (outputs in `raw_output_contents`).
 *
 * @throws AppError for a failure answer (problem+json, or KServe's `{"error"}`) with its `detail`, coded
 *   by its status (400 → INVALID_ARGUMENT, 503 → UNAVAILABLE, …: `errorCodeOfHttpStatus`); INTERNAL for a
 *   success whose body is not a KServe V2 infer response.
 */
export function decodeInferResult(result: InvocationResult): ModelInferResponseMsg {
  if (result.status >= 400) throw new AppError(errorCodeOfHttpStatus(result.status), failureDetail(result));
  const header = result.headers?.[BINARY_HEADER];
  let res: ReturnType<typeof decodeHttpInferResponse>;
  try {
    res = decodeHttpInferResponse(
      new Uint8Array(result.body.buffer, result.body.byteOffset, result.body.byteLength),
      header,
    );
  } catch (err) {
    throw new AppError(
      'INTERNAL',
      `the function's answer is not a KServe V2 infer response: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return encodeModelInferResponse({
    modelName: res.model_name,
    modelVersion: res.model_version,
    ...(res.id !== undefined ? { id: res.id } : {}),
    ...(res.parameters !== undefined ? { parameters: res.parameters } : {}),
    outputs: res.outputs,
  });
}

/**
 * A function's failure answer as the error a gRPC call ends with: its code by the HTTP status, its
 * detail as the message, and the whole problem+json (every NVCF field, `instance` = the RPC's path) for
 * the trailers. A failure body that is not problem+json is described by one.
 */
export function functionFailure(result: InvocationResult, instance: string, requestId: string): RelayedFunctionError {
  const detail = failureDetail(result);
  const relayed = relayedProblem(result, instance, requestId);
  const body =
    relayed === result && !result.contentType.toLowerCase().startsWith(PROBLEM_CONTENT_TYPE)
      ? Buffer.from(
          JSON.stringify(problem(result.status, detail, { source: 'inference-service', instance, requestId })),
        )
      : relayed.body;
  return new RelayedFunctionError(errorCodeOfHttpStatus(result.status), detail, body, requestId);
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
