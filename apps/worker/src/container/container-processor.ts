import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import {
  type EventStream,
  failureResult,
  type InvocationJob,
  type InvocationProcessor,
  type InvocationResult,
  type JobContext,
  type RequestStore,
} from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import type { ObjectStore } from '@nvcf/storage';
import { ContainerAnswers, type ServerAnswer } from './container-answers.ts';
import { type ContainerRequest, prepareRequest } from './container-request.ts';
import type { ServerInstance } from './container-servers.ts';
import { connectionErrorResult } from './error-mapping.ts';
import { InferenceConnectionError } from './inference-call.ts';
import { callServer, serverRequestHeaders } from './server-call.ts';
import type { SharedTicker } from './shared-ticker.ts';

export interface ContainerProcessorDeps {
  fv: FunctionVersion & { container: ContainerSpec };
  /** The version's server on this worker, while there is one. */
  server: () => ServerInstance | undefined;
  store: RequestStore;
  events: EventStream;
  objects: ObjectStore;
  largeResults: {
    settle(
      requestId: string,
      result: InvocationResult,
      artefacts?: { name: string; body: Buffer }[],
    ): Promise<InvocationResult>;
  };
  logger: Logger;
  workDir: string;
  timeoutMs: number;
  /** `NVCF-MAX-RESPONSE-SIZE-BYTES`: larger answers leave as the zip + 302. */
  maxResponseBytes: number;
  /** The worker's one timer for per-request checks (progress files, clients that left). */
  ticker: SharedTicker;
  /**
   * The running job's span as W3C Trace Context fields (tracing on): the server's request carries them instead
   * of the client's, so the function's own spans join the invocation's trace under the worker's. Absent: off.
   */
  traceContext?: () => InvocationJob['trace'];
}

/**
 * A container function's job (NVCF container functions): the client's body goes to the version's inference
 * server at `inferenceUrl` with NVCF's headers, and its answer comes back as NVCF's worker returns it (errors
 * mapped, a 202 polled through, an event stream relayed as it arrives, large outputs zipped). A server that
 * cannot be reached is retried only while the request never reached it (connection refused, no server up).
 *
 * A job reads prepare (container-request.ts) → call (server-call.ts) → answer (container-answers.ts) → settle.
 */
export function createContainerProcessor(deps: ContainerProcessorDeps): InvocationProcessor {
  const answers = new ContainerAnswers(deps.events, deps.ticker);
  return async (queued, ctx) => {
    const prepared = await prepareRequest(deps, queued, ctx);
    if (!prepared.ready) return prepared.result;
    return await invoke(deps, answers, prepared.request, ctx);
  };
}

/** Sends a prepared request to its server within the deadline, and settles the job with the answer. */
async function invoke(
  deps: ContainerProcessorDeps,
  answers: ContainerAnswers,
  request: ContainerRequest,
  ctx: JobContext,
): Promise<InvocationResult> {
  const { job } = request;
  const abort = new AbortController();
  const deadline = setTimeout(
    () => abort.abort(new Error('the inference server did not answer in time')),
    deps.timeoutMs,
  );
  /** The request may have reached the server: from here on, sending it again is not safe. */
  let sent = false;
  // A server being replaced (new secrets) is stopped only once it has answered this.
  const release = request.server.hold();
  try {
    const headers = serverRequestHeaders(request, deps.fv, {
      maxResponseBytes: deps.maxResponseBytes,
      trace: deps.traceContext?.(),
    });
    sent = true;
    const res = await callServer(request.url, headers, request.body, abort.signal);
    return await settle(deps, answers, request, await answers.answer(res, job, abort));
  } catch (err) {
    return failure(answers, request, ctx, err, { sent, aborted: abort.signal.aborted });
  } finally {
    release();
    answers.done(job.requestId);
    clearTimeout(deadline);
    abort.abort();
    await request.progress.stop();
    await request.dirs.remove();
  }
}

/** The job's result from the server's answer: a streaming client's events, or a plain answer (large ones zipped). */
async function settle(
  deps: ContainerProcessorDeps,
  answers: ContainerAnswers,
  { job, progress, dirs }: ContainerRequest,
  { result, relayed }: ServerAnswer,
): Promise<InvocationResult> {
  await progress.stop();
  if (job.stream) {
    if (!relayed) await answers.asEvent(job.requestId, result);
    return result;
  }
  // Only the server's plain answer (a 2xx of its HTTP contract) becomes a large result.
  if (!result.ok || result.status >= 300) return result;
  const artefacts = await dirs.artefacts();
  // A caller that cannot follow a 302 (gRPC) gets the body direct.
  if (job.directOnly) return result;
  return await deps.largeResults.settle(job.requestId, result, artefacts);
}

/**
 * A failed call: thrown again while another attempt is safe (the request never reached the server), else the
 * job's failure (a stream that started ends with it).
 */
function failure(
  answers: ContainerAnswers,
  { job, log }: ContainerRequest,
  ctx: JobContext,
  err: unknown,
  { sent, aborted }: { sent: boolean; aborted: boolean },
): Promise<InvocationResult> {
  if (err instanceof InferenceConnectionError || aborted) {
    const safe = err instanceof InferenceConnectionError && !err.sent && !aborted;
    if (safe && ctx.attempt < ctx.maxAttempts) {
      log.warn({ err: (err as Error).message, attempt: ctx.attempt }, 'inference server refused; will retry');
      throw err;
    }
    log.warn({ err: (err as Error).message }, 'inference connection error');
    return answers.endStream(job, connectionErrorResult(job.requestId));
  }
  // Before the request went out another attempt is safe; after, the server may have acted on it.
  if (!sent) throw err;
  log.error({ err }, 'failed after the request reached the inference server; not retrying');
  const failed = failureResult('INTERNAL', 'Internal error while making inference request', {
    source: 'nvcf-worker-service',
    requestId: job.requestId,
  });
  return answers.endStream(job, failed);
}
