import type { handleBidiStreamingCall, handleUnaryCall, Metadata, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { FunctionVersion } from '@nvcf/control-store';
import { grpcError, type NameVersionMsg, type UnaryImpl, unary } from '@nvcf/kserve-grpc';
import { AppError } from '@nvcf/protocol';
import { type Logger, type Tracing, tracingOff } from '@nvcf/service-kit';
import type { Authenticator } from '../auth/authenticator.ts';
import type { CallerLimiter } from '../auth/caller-limiter.ts';
import type { FunctionResolver, ResolvedVersion } from '../invocation/function-resolver.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import type { CallAuthorizer } from './call-authorizer.ts';
import { authorizeCall, type GrpcCaller } from './call-context.ts';
import { toGatewayGrpcError } from './grpc-status.ts';
import { checkModel } from './model-infer-bridge.ts';
import { modelInferCall } from './model-infer-call.ts';
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
  const authorized = (metadata: Metadata): Promise<GrpcCaller> =>
    deps.authorizer ? deps.authorizer.callerOf(metadata) : authorizeCall(deps.auth, metadata);
  const rpc: Rpc = (method, impl) => unary(method, impl, deps.logger, toGatewayGrpcError);
  const modelInfer = modelInferCall(
    { ...deps, authorized },
    { ...opts, defaultWaitMs: (opts.defaultTimeoutSeconds ?? 60) * 1000 },
  );
  const service: UntypedServiceImplementation = {
    ...metadataRpcs(deps, opts, authorized, rpc),
    ModelInfer: rpc('ModelInfer', traceUnary(deps.tracing ?? tracingOff, 'ModelInfer', modelInfer)),
    ModelStreamInfer: unsupportedStream(authorized),
  };
  for (const method of UNSUPPORTED) {
    service[method] = rpc(method, async (_req: unknown, call) => {
      await authorized(call.metadata);
      throw new AppError('UNIMPLEMENTED', `${method} is not supported by the gateway`);
    });
  }
  return service;
}

type Rpc = <Req, Res>(method: string, impl: UnaryImpl<Req, Res>) => handleUnaryCall<Req, Res>;
type Authorized = (metadata: Metadata) => Promise<GrpcCaller>;

/** The RPCs that answer from the function registry, without a queue trip. */
function metadataRpcs(
  deps: GatewayGrpcDeps,
  opts: GatewayGrpcServiceOptions,
  authorized: Authorized,
  rpc: Rpc,
): UntypedServiceImplementation {
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

  return {
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
  };
}

function unsupportedStream(authorized: Authorized): handleBidiStreamingCall<unknown, unknown> {
  return (call) => {
    authorized(call.metadata).then(
      () => call.emit('error', grpcError(12, 'ModelStreamInfer is not supported by the gateway; use ModelInfer')),
      (err: unknown) => call.emit('error', toGatewayGrpcError(err)),
    );
  };
}

function servesModel(fv: FunctionVersion, req: NameVersionMsg): boolean {
  const { model } = fv;
  if (!model) return false;
  return (req.name === '' || req.name === model.name) && (req.version === '' || req.version === model.version);
}
