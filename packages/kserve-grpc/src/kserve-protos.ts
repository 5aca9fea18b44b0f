import { fileURLToPath } from 'node:url';
import {
  type CallOptions,
  type Client,
  type ClientUnaryCall,
  type GrpcObject,
  type ServiceDefinition as GrpcServiceDefinition,
  loadPackageDefinition,
  Metadata,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync, type Options, type PackageDefinition, type ServiceDefinition } from '@grpc/proto-loader';
import type { ModelInferResponseMsg } from './kserve-messages.ts';

/** The repository's own .proto files (wire-compatible with Triton's published ones): `<repo>/proto/`. */
export const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

/**
 * How messages look in JavaScript, on the server and in the tests' clients alike:
 * - `keepCase`: field names as in the .proto (`raw_input_contents`), matching Triton's JSON forms;
 * - `longs: String`: int64/uint64 decode to decimal strings, so INT64 contents beyond 2^53 stay exact
 *   (encoding accepts numbers, strings or bigint-free Long values);
 * - bytes decode to Buffers (views of the received message, no copy);
 * - `defaults`: absent scalars and repeated fields read as their defaults, absent messages as null;
 * - `oneofs`: a oneof's case is named in a virtual field (`parameter_choice`).
 */
export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

/** gRPC's own limit is 4 MiB; Triton and tritonclient use INT32_MAX both ways (Triton Python client). */
export const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/**
 * What a server accepts by default: grpc-js holds a whole message in memory before a handler sees it, so
 * INT32_MAX would let any caller make the process buffer 2 GiB per call. 64 MiB is Triton's HTTP body
 * default (`--http-max-input-size`), so both surfaces take the same requests out of the box.
 */
export const DEFAULT_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

export interface KserveProtos {
  packageDefinition: PackageDefinition;
  inference: ServiceDefinition;
  health: ServiceDefinition;
}

let cached: KserveProtos | undefined;

/** Loads `grpc_service.proto` (with `model_config.proto`) and `health.proto` once per process. */
export function loadKserveProtos(): KserveProtos {
  if (!cached) {
    const packageDefinition = loadSync(['grpc_service.proto', 'health.proto'], PROTO_LOADER_OPTIONS);
    cached = {
      packageDefinition,
      inference: packageDefinition['inference.GRPCInferenceService'] as ServiceDefinition,
      health: packageDefinition['grpc.health.v1.Health'] as ServiceDefinition,
    };
  }
  return cached;
}

/** Client constructors generated from the same files, for tests and in-process callers. */
export function loadKserveClients(): {
  GRPCInferenceService: ServiceClientConstructor;
  Health: ServiceClientConstructor;
} {
  const root = loadPackageDefinition(loadKserveProtos().packageDefinition);
  const inference = root.inference as GrpcObject;
  const health = ((root.grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject;
  return {
    GRPCInferenceService: inference.GRPCInferenceService as ServiceClientConstructor,
    Health: health.Health as ServiceClientConstructor,
  };
}

/**
 * Calls a unary method by its .proto name on a client that grpc-js generated at run time, whose methods its
 * type does not list: grpc-js's typed `makeUnaryRequest` with the method's own path and (de)serializers from
 * `service` (a generated constructor's `.service`, or a definition the caller holds). The answer is the plain
 * object proto-loader decodes (PROTO_LOADER_OPTIONS).
 */
export function callUnary(
  client: Client,
  service: GrpcServiceDefinition,
  method: string,
  request: object,
  metadata: Metadata,
  options: CallOptions,
  callback: (err: ServiceError | null, response?: object) => void,
): ClientUnaryCall {
  const definition = service[method];
  if (!definition) throw new Error(`the service has no method ${method}`);
  return client.makeUnaryRequest(
    definition.path,
    definition.requestSerialize,
    definition.responseDeserialize,
    request,
    metadata,
    options,
    callback,
  );
}

/** Metadata as plain strings and a deadline relative to the call, for `invokeUnary`. */
export interface UnaryCallOptions {
  metadata?: Record<string, string>;
  deadlineMs?: number;
}

/** A unary call's answer with the initial metadata the server sent (empty when it sent none). */
export interface UnaryAnswer {
  response: object;
  metadata: Metadata;
}

/**
 * `callUnary` as a promise, for tests and in-process callers. A failure rejects with grpc-js's ServiceError,
 * carrying the initial metadata the server sent before its status (if any) as `initialMetadata`.
 */
export function invokeUnary(
  client: Client,
  service: GrpcServiceDefinition,
  method: string,
  request: object,
  opts: UnaryCallOptions = {},
): Promise<UnaryAnswer> {
  return new Promise((resolve, reject) => {
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(opts.metadata ?? {})) metadata.set(k, v);
    const options = opts.deadlineMs === undefined ? {} : { deadline: Date.now() + opts.deadlineMs };
    let initial: Metadata | undefined;
    const call = callUnary(client, service, method, request, metadata, options, (err, response) => {
      if (err || !response)
        reject(Object.assign(err ?? new Error(`${method} answered nothing`), { initialMetadata: initial }));
      else resolve({ response, metadata: initial ?? new Metadata() });
    });
    call.on('metadata', (m: Metadata) => {
      initial = m;
    });
  });
}

/**
 * A ModelInferResponse as its wire bytes, for a process that renders an answer another process sends (a
 * worker answering the gateway's gRPC port through the queue); `passEncodedResponses` lets the sender's
 * service send such bytes as they are.
 */
export function serializeModelInferResponse(msg: ModelInferResponseMsg): Buffer {
  return loadKserveProtos().inference.ModelInfer!.responseSerialize(msg);
}

/**
 * The inference service definition with ModelInfer answers that may already be encoded: a handler returning
 * a Buffer (`serializeModelInferResponse`'s bytes, made elsewhere) has it sent unchanged, anything else is
 * serialized as usual.
 */
export function passEncodedResponses(inference: ServiceDefinition): ServiceDefinition {
  const method = inference.ModelInfer;
  if (!method) return inference;
  const serialize = method.responseSerialize;
  return {
    ...inference,
    ModelInfer: {
      ...method,
      responseSerialize: (value: object) => (Buffer.isBuffer(value) ? value : serialize(value)),
    },
  };
}
