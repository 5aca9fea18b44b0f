import { Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import { decodeModelInferRequest, type ModelInferRequestMsg } from '@nvcf/kserve-grpc';
import { AppError, NvcfHeader } from '@nvcf/protocol';
import type { CallerLimiter } from '../auth/caller-limiter.ts';
import { principalKey } from '../auth/principal.ts';
import type { FunctionResolver } from '../invocation/function-resolver.ts';
import type { InvocationOutcome, InvocationService, InvokeRequest } from '../invocation/invocation-service.ts';
import { type GrpcCaller, metadataHeaders } from './call-context.ts';
import { checkModel, decodeInferResult, encodeQueuedInfer, functionFailure } from './model-infer-bridge.ts';

type ModelInferCall = ServerUnaryCall<ModelInferRequestMsg, Buffer>;

/** What ModelInfer works with: the gateway's invocation path, and the call's verified caller. */
export interface ModelInferDeps {
  functions: FunctionResolver;
  invocations: InvocationService;
  /** pexec's per-credential limit; absent: none. */
  limiter?: CallerLimiter;
  authorized: (metadata: Metadata) => Promise<GrpcCaller>;
}

export interface ModelInferOptions {
  /** How long a call without a gRPC deadline waits for its result. */
  defaultWaitMs: number;
  maxElements: number;
  maxBodyBytes: number;
}

/** The `instance` of a problem relayed on ModelInfer: the RPC's path, as HTTP's is the request's. */
const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

/** A client deadline longer than this is not waited for in one piece (timers cap near 24.8 days anyway). */
const MAX_WAIT_MS = 24 * 3600 * 1000;

/** The gRPC deadline (Infinity when the client set none) as a wait window, else the default. */
export function waitWindowMs(deadline: Date | number, defaultMs: number, now = Date.now()): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return defaultMs;
  return Math.min(Math.max(0, at - now), MAX_WAIT_MS);
}

/**
 * ModelInfer as a pexec invocation of the function, answered with the worker's rendering of the response, sent
 * as it is (`passEncodedResponses`).
 */
export function modelInferCall(
  deps: ModelInferDeps,
  opts: ModelInferOptions,
): (msg: ModelInferRequestMsg, call: ModelInferCall) => Promise<Buffer> {
  const decodeOpts = { maxElements: opts.maxElements };
  return async (msg, call) => {
    const windowMs = waitWindowMs(call.getDeadline(), opts.defaultWaitMs);
    const waitUntil = Date.now() + windowMs;
    const caller = await deps.authorized(call.metadata);
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
    const outcome = await invokeWhileConnected(deps.invocations, call, {
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
    });
    return answer(deps.invocations, call, outcome, { windowMs, waitUntil });
  };
}

/** Invokes, ending the wait when the client goes away. */
async function invokeWhileConnected(
  invocations: InvocationService,
  call: ModelInferCall,
  req: Omit<InvokeRequest, 'signal'>,
): Promise<InvocationOutcome> {
  // The client going away ends the wait; the request itself runs on (as pexec's does).
  const aborter = new AbortController();
  const onCancel = () => aborter.abort();
  call.once('cancelled', onCancel);
  try {
    return await invocations.invoke({ ...req, signal: aborter.signal });
  } finally {
    call.off('cancelled', onCancel);
  }
}

/** The call's answer: the result's bytes, or the status that says why there are none (yet). */
function answer(
  invocations: InvocationService,
  call: ModelInferCall,
  outcome: InvocationOutcome,
  { windowMs, waitUntil }: { windowMs: number; waitUntil: number },
): Buffer {
  const { requestId } = outcome;
  const initial = new Metadata();
  initial.set(NvcfHeader.REQID, requestId);
  call.sendMetadata(initial);
  if (outcome.kind === 'result') {
    // A unary answer goes out in one piece right after this: it counts as delivered.
    void invocations.delivered(requestId, outcome.result);
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
