import type { ServerDuplexStream, ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import { AppError } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import type protobuf from 'protobufjs';
import type { InferenceCore } from '../core/core-types.ts';
import { isServerFault } from '../triton-v1/request-status.ts';
import { createTritonV1Service, type TritonV1Options, type TritonV1Service } from '../triton-v1/triton-v1-service.ts';
import { compactFromDecoded, compactV1 } from '../triton-v1/v1-codec.ts';
import type { InferRequestHeaderMsg, RequestStatusMsg } from '../triton-v1/v1-messages.ts';

export interface TritonV1GrpcOptions extends TritonV1Options {
  logger?: Logger;
  /** A service to share (request ids, endpoint statistics) with the v1 HTTP routes; default a new one. */
  service?: TritonV1Service;
}

/** The fields of the decoded InferRequest this service reads (protobufjs message, proto field names). */
interface InferRequestMessage extends protobuf.Message {
  model_name: string;
  model_version: number | { toString(): string };
  meta_data?: protobuf.Message | null;
  raw_input: Uint8Array[];
}

/**
 * The legacy v1 gRPC service (TRTIS 1.x protos: grpc_service.proto) over the shared core: Status, Health,
 * Infer, StreamInfer and ModelControl through the transport-neutral TritonV1Service; SharedMemoryControl
 * answers UNSUPPORTED. Every outcome, failures included, is an OK gRPC status with the v1 code in
 * `request_status`, as v1 clients expect.
 *
 * @example
 * server.addService(tritonV1GrpcDefinition(), createTritonV1GrpcService(core, { logger }));
 */
export function createTritonV1GrpcService(
  core: InferenceCore,
  opts: TritonV1GrpcOptions = {},
): UntypedServiceImplementation {
  const v1 = opts.service ?? createTritonV1Service(core, opts);

  /** Runs `fn`; its result (or failure) is answered with a RequestStatus, never a gRPC error. */
  const answer = async (method: string, fn: () => Promise<object> | object): Promise<object> => {
    try {
      const fields = await fn();
      return { request_status: status(v1.requestStatus()), ...fields };
    } catch (err) {
      if (isServerFault(err)) opts.logger?.error({ err, method }, 'v1 gRPC call failed');
      return { request_status: status(v1.requestStatus(err)) };
    }
  };
  const unary =
    <Req>(method: string, fn: (req: Req, call: ServerUnaryCall<Req, object>) => Promise<object> | object) =>
    (call: ServerUnaryCall<Req, object>, callback: sendUnaryData<object>) => {
      void answer(method, () => fn(call.request, call)).then((res) => callback(null, res));
    };

  const infer = async (req: InferRequestMessage, signal?: AbortSignal) => {
    const version = Number(String(req.model_version));
    const header = (
      req.meta_data ? compactFromDecoded('InferRequestHeader', req.meta_data) : {}
    ) as InferRequestHeaderMsg;
    const result = await v1.infer({
      model: req.model_name,
      // -1 (and proto3's unset 0) ask for the latest ready version.
      ...(version > 0 ? { version: String(version) } : {}),
      header,
      raw: req.raw_input,
      ...(signal ? { signal } : {}),
    });
    return { meta_data: compactV1('InferResponseHeader', result.header), raw_output: result.rawOutputs };
  };

  return {
    Status: unary('Status', async (req: { model_name: string }) => ({
      server_status: compactV1('ServerStatus', await v1.status(req.model_name || undefined)),
    })),
    Health: unary('Health', (req: { mode: string }) => ({ health: v1.health(req.mode) })),
    Infer: unary('Infer', (req: InferRequestMessage, call) => infer(req, abortSignalOf(call))),
    StreamInfer: (call: ServerDuplexStream<InferRequestMessage, object>) => {
      // One at a time, answered in arrival order (TRTIS 1.x API).
      let chain = Promise.resolve();
      call.on('data', (req: InferRequestMessage) => {
        chain = chain.then(async () => {
          const res = await answer('StreamInfer', () => infer(req));
          if (!call.cancelled) call.write(res);
        });
      });
      call.on('end', () => void chain.then(() => call.end()));
    },
    ModelControl: unary('ModelControl', async (req: { model_name: string; type: number }) => {
      await v1.modelControl(req.type === 1 ? 'load' : 'unload', req.model_name);
      return {};
    }),
    SharedMemoryControl: unary('SharedMemoryControl', () => {
      throw new AppError('UNIMPLEMENTED', 'shared memory is not supported by this server');
    }),
  };
}

const status = (s: RequestStatusMsg) => compactV1('RequestStatus', s);

/** Aborted when the client cancels or its deadline passes: the core then drops the request if still queued. */
function abortSignalOf(call: ServerUnaryCall<unknown, unknown>): AbortSignal {
  const controller = new AbortController();
  call.once('cancelled', () => controller.abort());
  return controller.signal;
}
