import {
  type handleBidiStreamingCall,
  type handleUnaryCall,
  Metadata,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { FunctionVersion } from '@nvcf/control-store';
import {
  decodeModelInferRequest,
  grpcError,
  type ModelInferRequestMsg,
  type NameVersionMsg,
  type UnaryImpl,
  unary,
} from '@nvcf/kserve-grpc';
import { AppError, NvcfHeader } from '@nvcf/protocol';
import { type Logger, type Tracing, tracingOff } from '@nvcf/service-kit';
import type { Authenticator } from '../auth/authenticator.ts';
import type { CallerLimiter } from '../auth/caller-limiter.ts';
import { principalKey } from '../auth/principal.ts';
import type { FunctionResolver, ResolvedVersion } from '../invocation/function-resolver.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import type { CallAuthorizer } from './call-authorizer.ts';
import { authorizeCall, type GrpcCaller, metadataHeaders } from './call-context.ts';
import { toGatewayGrpcError } from './grpc-status.ts';
import { checkModel, decodeInferResult, encodeQueuedInfer, functionFailure } from './model-infer-bridge.ts';
import { traceUnary } from './trace-call.ts';

/** The gateway's own objects the gRPC port works with (server.ts builds them once for both ports). */
export interface GatewayGrpcDeps {
  auth: Authenticator;
  functions: FunctionResolver;
  /** The pexec invocation path: a ModelInfer is one invocation, queued and answered the same way. */
  invocations: InvocationService;
  /** pexec's per-credential limit, applied to ModelInfer (not to the metadata RPCs); absent: none. */
  limiter?: CallerLimiter;
  logger?: Logger;
  /** The server's interceptor verdicts (gateway-grpc-server.ts); absent, each RPC authorizes itself. */
  authorizer?: CallAuthorizer;
  /** OpenTelemetry: a server span per ModelInfer (absent: off). */
  tracing?: Tracing;
}

export interface GatewayGrpcServiceOptions {
  /** How long a ModelInfer without a gRPC deadline waits for its result before DEADLINE_EXCEEDED. Default 60. */
  defaultTimeoutSeconds?: number;
  /** Per-input element limit (MAX_TENSOR_ELEMENTS), checked against the shape before anything is allocated. */
  maxElements: number;
  /**
   * Largest request queued (MAX_REQUEST_BODY_BYTES): a ModelInfer's queued body is the HTTP request pexec
   * would have read, so it gets pexec's limit (RESOURCE_EXHAUSTED past it, as pexec's 413 maps).
   */
  maxBodyBytes: number;
  /** ServerMetadata's answer; defaults to what the workers report (Triton's name and version). */
  serverName?: string;
  serverVersion?: string;
}

/** Declared in grpc_service.proto, not offered through the gateway (no function-level equivalent yet). */
const UNSUPPORTED = [
  'ModelConfig',
  'ModelStatistics',
  'RepositoryIndex',
  'RepositoryModelLoad',
  'RepositoryModelUnload',
  'SystemSharedMemoryStatus',
  'SystemSharedMemoryRegister',
  'SystemSharedMemoryUnregister',
  'CudaSharedMemoryStatus',
  'CudaSharedMemoryRegister',
  'CudaSharedMemoryUnregister',
  'TraceSetting',
  'LogSettings',
] as const;

/** The `instance` of a problem relayed on ModelInfer: the RPC's path, as HTTP's is the request's. */
const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

/** A client deadline longer than this is not waited for in one piece (timers cap near 24.8 days anyway). */
const MAX_WAIT_MS = 24 * 3600 * 1000;

/**
 * `inference.GRPCInferenceService` on the gateway (NVCF API: gRPC invocation): every RPC authenticates from its
 * metadata (`authorization`, `function-id`, optional `function-version-id`) and addresses that function.
 * ModelInfer is a pexec invocation of the function: queued as a KServe request (JSON part as data, tensors
 * as raw bytes), answered by a worker that renders the ModelInferResponse, sent on as those bytes. The metadata RPCs answer from the
 * function registry, without a queue trip. Errors are gRPC statuses (grpc-status.ts).
 */
export function createGatewayGrpcService(
  deps: GatewayGrpcDeps,
  opts: GatewayGrpcServiceOptions,
): UntypedServiceImplementation {
  const { logger } = deps;
  const defaultWaitMs = (opts.defaultTimeoutSeconds ?? 60) * 1000;
  const decodeOpts = { maxElements: opts.maxElements };
  const authorized = (metadata: Metadata): Promise<GrpcCaller> =>
    deps.authorizer ? deps.authorizer.callerOf(metadata) : authorizeCall(deps.auth, metadata);
  const rpc = <Req, Res>(method: string, impl: UnaryImpl<Req, Res>): handleUnaryCall<Req, Res> =>
    unary(method, impl, logger, toGatewayGrpcError);

  /** The call's function version; `invocable: false` when it exists but cannot be invoked now. */
  async function lookup(caller: GrpcCaller): Promise<{ resolved?: ResolvedVersion; invocable: boolean }> {
    try {
      const resolved = await deps.functions.resolve(caller.functionId, caller.versionId, caller.principal.ncaId);
      return { resolved, invocable: true };
    } catch (err) {
      // The resolver's only INVALID_ARGUMENT: the function (version) exists in a state that cannot be invoked.
      if (err instanceof AppError && err.code === 'INVALID_ARGUMENT') return { invocable: false };
      throw err;
    }
  }

  /** Answers with the worker's rendering of the response, sent as it is (`passEncodedResponses`). */
  async function modelInfer(
    msg: ModelInferRequestMsg,
    call: ServerUnaryCall<ModelInferRequestMsg, Buffer>,
  ): Promise<Buffer> {
    const windowMs = waitWindowMs(call.getDeadline(), defaultWaitMs);
    const waitUntil = Date.now() + windowMs;
    const caller = await authorized(call.metadata);
    await deps.limiter?.take(caller.principal);
    // One pick of the version for both the model check and the invocation.
    const { fv } = await deps.functions.resolve(caller.functionId, caller.versionId, caller.principal.ncaId);
    const request = decodeModelInferRequest(msg, decodeOpts);
    checkModel(fv, request.modelName, request.modelVersion);
    const { input, binary } = encodeQueuedInfer(request, { maxBodyBytes: opts.maxBodyBytes });

    // Nobody would wait for the answer: nothing is queued.
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    if (Date.now() >= waitUntil) {
      throw new AppError('DEADLINE_EXCEEDED', 'deadline exceeded before the request was queued');
    }

    // The client going away ends the wait; the request itself runs on (as pexec's does).
    const aborter = new AbortController();
    const onCancel = () => aborter.abort();
    call.once('cancelled', onCancel);
    let outcome: Awaited<ReturnType<InvocationService['invoke']>>;
    try {
      outcome = await deps.invocations.invoke({
        principal: principalKey(caller.principal),
        ncaId: caller.principal.ncaId,
        directOnly: true,
        respond: 'kserve-grpc',
        functionId: fv.id,
        versionId: fv.versionId,
        input,
        body: binary,
        headers: metadataHeaders(call.metadata),
        pollSeconds: Math.max(0, waitUntil - Date.now()) / 1000,
        signal: aborter.signal,
      });
    } finally {
      call.off('cancelled', onCancel);
    }
    const { requestId } = outcome;
    const initial = new Metadata();
    initial.set(NvcfHeader.REQID, requestId);
    call.sendMetadata(initial);
    if (outcome.kind === 'result') {
      // A unary answer goes out in one piece right after this: it counts as delivered.
      void deps.invocations.delivered(requestId, outcome.result);
      if (!outcome.result.ok) throw functionFailure(outcome.result, MODEL_INFER_PATH, requestId);
      return decodeInferResult(outcome.result);
    }
    if (outcome.kind === 'unknown') {
      throw new AppError('INTERNAL', `the result of request '${requestId}' is gone (expired or already delivered)`);
    }
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    const later = `its result (a serialized ModelInferResponse) can be fetched with GET /v2/nvcf/pexec/status/${requestId}`;
    // The wait ended early without the client leaving: the gateway is shutting down.
    if (Date.now() < waitUntil - 20) throw new AppError('UNAVAILABLE', `the gateway is shutting down; ${later}`);
    throw new AppError(
      'DEADLINE_EXCEEDED',
      `request '${requestId}' did not complete within ${Math.round(windowMs / 100) / 10} s; ${later}`,
    );
  }

  const unsupportedStream: handleBidiStreamingCall<unknown, unknown> = (call) => {
    authorized(call.metadata).then(
      () => call.emit('error', grpcError(12, 'ModelStreamInfer is not supported by the gateway; use ModelInfer')),
      (err: unknown) => call.emit('error', toGatewayGrpcError(err)),
    );
  };

  const service: UntypedServiceImplementation = {
    ServerLive: rpc('ServerLive', async (_req: unknown, call) => {
      await lookup(await authorized(call.metadata));
      return { live: true };
    }),
    ServerReady: rpc('ServerReady', async (_req: unknown, call) => {
      const { invocable } = await lookup(await authorized(call.metadata));
      return { ready: invocable };
    }),
    ServerMetadata: rpc('ServerMetadata', async (_req: unknown, call) => {
      await lookup(await authorized(call.metadata));
      return {
        name: opts.serverName ?? 'triton',
        version: opts.serverVersion ?? '2.59.0',
        extensions: ['classification'],
      };
    }),
    ModelReady: rpc('ModelReady', async (req: NameVersionMsg, call) => {
      const { resolved } = await lookup(await authorized(call.metadata));
      return { ready: resolved !== undefined && servesModel(resolved.fv, req) };
    }),
    ModelMetadata: rpc('ModelMetadata', async (req: NameVersionMsg, call) => {
      const caller = await authorized(call.metadata);
      const { fv } = await deps.functions.resolve(caller.functionId, caller.versionId, caller.principal.ncaId);
      const model = checkModel(fv, req.name, req.version);
      return {
        name: model.name,
        versions: [model.version],
        platform: model.platform,
        inputs: model.inputs,
        outputs: model.outputs,
      };
    }),
    ModelInfer: rpc('ModelInfer', traceUnary(deps.tracing ?? tracingOff, 'ModelInfer', modelInfer)),
    ModelStreamInfer: unsupportedStream,
  };
  for (const method of UNSUPPORTED) {
    service[method] = rpc(method, async (_req: unknown, call) => {
      await authorized(call.metadata);
      throw new AppError('UNIMPLEMENTED', `${method} is not supported by the gateway`);
    });
  }
  return service;
}

function servesModel(fv: FunctionVersion, req: NameVersionMsg): boolean {
  const { model } = fv;
  if (!model) return false;
  return (req.name === '' || req.name === model.name) && (req.version === '' || req.version === model.version);
}

/** The gRPC deadline (Infinity when the client set none) as a wait window, else the default. */
export function waitWindowMs(deadline: Date | number, defaultMs: number, now = Date.now()): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return defaultMs;
  return Math.min(Math.max(0, at - now), MAX_WAIT_MS);
}
