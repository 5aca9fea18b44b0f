import { isAppError } from '@nvcf/protocol';
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
import { type ModelJob, readModelJob } from './job-input.ts';
import type { ModelRunner, RunnerAnswer } from './model-runner.ts';

export interface ModelProcessorDeps {
  /** Where an input kept beside its job is read from. */
  store: Pick<RequestStore, 'readInput'>;
  logger: Logger;
  /** Moves a result over the direct limit to the object store (answered with a 302). */
  largeResults: { settle(requestId: string, result: InvocationResult): Promise<InvocationResult> };
  /** Where a streaming client's events go (one event for a function that answers once). */
  events: EventStream;
  /** How this version's jobs run (runner-for.ts). */
  runner: ModelRunner;
}

/** The request's event stream, noting whether this attempt appended anything to it. */
function countAppends(events: EventStream): EventStream & { readonly appended: boolean } {
  let appended = false;
  return {
    ...events,
    get appended() {
      return appended;
    },
    append(requestId, batch) {
      appended ||= batch.length > 0;
      return events.append(requestId, batch);
    },
  };
}

/**
 * One job of a model function: its input read, run by the version's runner, answered with the result (the consumer
 * stores it; a request settled meanwhile, by a cancel, keeps its answer: the first writer wins). Requests the model
 * refuses are answered, not retried; unexpected failures are retried by the consumer and answered with a 500 once
 * attempts run out.
 */
export function createModelProcessor(deps: ModelProcessorDeps): InvocationProcessor {
  return async (queued, ctx) => {
    const job = await readModelJob(deps.store, queued, ctx.entryBytes);
    const log = deps.logger.child({
      requestId: queued.requestId,
      functionId: queued.functionId,
      versionId: queued.versionId,
    });
    if (!job) return inputGone(queued, log);
    const started = performance.now();
    const events = countAppends(deps.events);
    const answer = await answerJob(deps.runner, job, events, ctx, log);
    const result = await deliver(deps, job, answer, events);
    log.debug({ status: result.status, ms: Math.round(performance.now() - started) }, 'job done');
    // The consumer stores it as the job leaves the queue (one step).
    return result;
  };
}

/** Only an expired request loses its input (both share the TTL): answer it, if anyone still can. */
function inputGone(queued: InvocationJob, log: Logger): InvocationResult {
  log.warn('job skipped: its stored input is gone (the request expired)');
  return failureResult('INTERNAL', 'Internal error: the invocation input expired before a worker took it', {
    source: 'nvcf-worker-service',
    requestId: queued.requestId,
  });
}

/** The runner's answer; a refusal answered as the function's failure, a failure thrown again while attempts remain. */
async function answerJob(
  runner: ModelRunner,
  job: ModelJob,
  events: EventStream,
  ctx: JobContext,
  log: Logger,
): Promise<RunnerAnswer> {
  try {
    return await runner(job, events);
  } catch (err) {
    if (isAppError(err) && !err.retryable) {
      return {
        result: failureResult(err.code, err.message, { source: 'inference-service', requestId: job.requestId }),
        eventsSent: false,
      };
    }
    if (ctx.attempt < ctx.maxAttempts) {
      log.warn({ err, attempt: ctx.attempt }, 'inference failed; will retry');
      throw err;
    }
    log.error({ err, attempt: ctx.attempt }, 'inference failed; giving up');
    const failed = failureResult('INTERNAL', 'Internal error while making inference request', {
      source: 'nvcf-worker-service',
      requestId: job.requestId,
    });
    return { result: failed, eventsSent: false };
  }
}

/** The answer as the job's client gets it: an event for a streaming client, a large result moved aside otherwise. */
async function deliver(
  deps: ModelProcessorDeps,
  job: ModelJob,
  { result, eventsSent }: RunnerAnswer,
  events: EventStream & { readonly appended: boolean },
): Promise<InvocationResult> {
  // When the answer already went out as events, the stored result is only what a later poll sees.
  if (job.stream && !eventsSent) {
    // SSE: a function that answers once is one event, then the end of the stream. A failure after
    // the stream started is its last event, marked as an error. A refusal before any output is no
    // event at all: the gateway, still holding the response, answers it with its HTTP status, as
    // the same call without SSE is answered. No 302 transform applies to a stream.
    const data = result.body.toString('utf8');
    if (result.ok) await events.append(job.requestId, [{ data, last: true }]);
    else if (events.appended) await events.append(job.requestId, [{ data, last: true, error: true }]);
    return result;
  }
  // A caller that cannot follow a 302 (gRPC) gets every result direct.
  if (!job.stream && !job.directOnly) return deps.largeResults.settle(job.requestId, result);
  return result;
}
