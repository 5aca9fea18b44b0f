import {
  answerInferCall,
  decodeInferCall,
  type InferBody,
  type InferCall,
  type InferenceCore,
  type ModelRef,
} from '@nvcf/inference-server';
import { encodeModelInferResponse, serializeModelInferResponse } from '@nvcf/kserve-grpc';
import { AppError, isAppError } from '@nvcf/protocol';
import {
  type EventStream,
  type InvocationJob,
  type InvocationProcessor,
  type InvocationResult,
  inputKeptBeside,
  MODEL_INFER_RESPONSE_TYPE,
  type RequestStore,
  successResult,
} from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import type { ObjectStore } from '@nvcf/storage';
import { bindAssetInputs } from './inference/asset-inputs.ts';
import { answerInChunks } from './inference/batch-chunks.ts';
import { kserveRendering, runDecoupled } from './inference/decoupled-runner.ts';
import type { JobInput } from './inference/job-input.ts';
import { completionCall, completionRequestTo } from './inference/openai-completions.ts';
import { problemResult } from './inference/problem-result.ts';

export interface ProcessorDeps {
  store: RequestStore;
  core: InferenceCore;
  model: ModelRef;
  logger: Logger;
  maxTensorElements: number;
  /** Moves a result over the direct limit to the object store (answered with a 302). */
  largeResults: { settle(requestId: string, result: InvocationResult): Promise<InvocationResult> };
  /** A streaming request's batch is answered this many rows at a time, one event each (0: whole). */
  streamChunkRows: number;
  /** Where asset-borne input tensors are read from. */
  objects: ObjectStore;
  /** Where a streaming client's events go (one event for a function that answers once). */
  events: EventStream;
}

/** A job whose input is at hand. */
type ReadyJob = Omit<InvocationJob, 'input'> & { input: JobInput };

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
 * One job: run the model, answer with the result (the consumer stores it; a request settled meanwhile, by a cancel,
 * keeps its answer: the first writer wins). Requests the model refuses are answered, not retried;
 * unexpected failures are retried by the consumer and answered with a 500 once attempts run out.
 */
export function createInvocationProcessor(deps: ProcessorDeps): InvocationProcessor {
  const { store, core, model } = deps;
  /**
   * Runs one job's request: a decoupled model's responses one by one (an OpenAI completion request to a text
   * generation model is one of those), a large batch to a streaming client in chunks, anything else in one piece.
   * Undefined when the request turned out to be settled already.
   */
  async function answerJob(
    job: ReadyJob,
    events: EventStream,
  ): Promise<{ result: InvocationResult; eventsSent: boolean }> {
    const target = {
      requestId: job.requestId,
      ...(job.stream ? { stream: { events } } : {}),
      cancels: events,
      reportProgress: (percent: number, partial: Buffer) => store.reportProgress(job.requestId, percent, partial),
    };
    const completion = completionRequestTo(job.input, () => core.modelMetadata(model.name, model.version));
    if (completion) {
      const { request, rendering } = completionCall(job.input, { ...model, ...completion }, job.requestId);
      return { result: await runDecoupled(core, request, target, rendering), eventsSent: job.stream === true };
    }
    const call = await decodeJob(job);
    if (core.isDecoupled(model.name, model.version)) {
      // A unary gRPC call has room for one response; Triton refuses it in these words.
      if (job.respond === 'kserve-grpc') {
        throw new AppError('UNIMPLEMENTED', "ModelInfer RPC doesn't support models with decoupled transaction policy");
      }
      const request = { ...call.request, inputsOwned: true };
      const result = await runDecoupled(core, request, target, kserveRendering(request, job.requestId));
      return { result, eventsSent: job.stream === true };
    }
    if (job.stream && deps.streamChunkRows > 0) {
      const chunked = await answerInChunks(core, call, deps.streamChunkRows, (reply, last) =>
        events.append(job.requestId, [{ data: reply.body.toString('utf8'), last }]),
      );
      if (chunked) {
        const note = { id: job.requestId, streamed: true, detail: 'answered in chunks as server-sent events' };
        return {
          result: successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(note)) }),
          eventsSent: true,
        };
      }
    }
    return { result: await render(job, call), eventsSent: false };
  }

  /** Runs a decoded call and renders its answer as the job asks. */
  async function render(job: ReadyJob, call: InferCall): Promise<InvocationResult> {
    // The decoded tensors are this job's alone (the chunked path slices them; it did not run).
    const request = { ...call.request, inputsOwned: true };
    if (job.respond === 'kserve-grpc') {
      // Rendered here, once, as the gateway's gRPC port sends it: no HTTP form in between.
      const body = serializeModelInferResponse(encodeModelInferResponse(await core.infer(request)));
      return successResult({ contentType: MODEL_INFER_RESPONSE_TYPE, body });
    }
    const reply = await answerInferCall(core, { ...call, request });
    return successResult({ contentType: reply.contentType, body: reply.body, headers: reply.headers });
  }

  /** The job's body in the forms `/infer` takes, with inputs named by asset read from the object store. */
  async function decodeJob(job: ReadyJob) {
    if (job.input.kind === 'kserve') {
      const parts = { header: job.input.header, binary: job.input.binary };
      return decodeInferCall(core, model, parts, undefined, deps.maxTensorElements);
    }
    let body: InferBody = job.input.kind === 'json' ? { json: job.input.value } : job.input.bytes;
    let header = job.headers['inference-header-content-length'];
    if (job.input.kind === 'json') {
      const referenced = new Set(job.assetIds ?? []);
      const bound = await bindAssetInputs(job.input.value, referenced, deps.objects, {
        maxElements: deps.maxTensorElements,
      });
      if (bound) {
        body = bound.body;
        header = String(bound.headerLength);
      }
    }
    return decodeInferCall(core, model, body, header, deps.maxTensorElements);
  }

  /**
   * The job with its input at hand: bytes its entry carried (`entryBytes`), or those kept beside it read from the
   * request store (undefined: they are gone).
   */
  async function withInput(
    job: InvocationJob,
    kept: Promise<Buffer | undefined>,
    entryBytes: Buffer | undefined,
  ): Promise<ReadyJob | undefined> {
    const { input } = job;
    if (input.kind === 'json') return { ...job, input: { kind: 'json', value: input.value } };
    if (input.kind === 'bytes') return { ...job, input: { kind: 'bytes', bytes: Buffer.from(input.base64, 'base64') } };
    if (input.kind === 'entry' || (input.kind === 'kserve' && (input.inEntry || input.binaryBytes === 0))) {
      // The consumer checked that the entry carries the bytes (as many as a `kserve` input says).
      const bytes = entryBytes ?? Buffer.alloc(0);
      if (input.kind === 'entry') return { ...job, input: { kind: 'bytes', bytes } };
      return { ...job, input: { kind: 'kserve', header: input.header, binary: bytes } };
    }
    const raw = await kept;
    if (!raw) return undefined;
    // A copy of its own: ioredis hands out slices of its parser's buffers, and these bytes move to a model's thread.
    if (input.kind === 'kserve') {
      if (raw.byteLength !== input.binaryBytes) return undefined;
      return { ...job, input: { kind: 'kserve', header: input.header, binary: Buffer.from(raw) } };
    }
    if (input.format === 'bytes') return { ...job, input: { kind: 'bytes', bytes: Buffer.from(raw) } };
    return { ...job, input: { kind: 'json', value: JSON.parse(raw.toString('utf8')) } };
  }

  return async (queued, ctx) => {
    // A job needs no claim: its delivery is one (the queue's pending list shows a worker has it), and a request
    // settled meanwhile (cancelled) keeps its answer when this one is stored (the first writer wins). Only an input
    // kept beside the job costs a round trip, its read.
    const kept = inputKeptBeside(queued.input) ? store.readInput(queued.requestId) : Promise.resolve(undefined);
    // Observed here: a job whose input travels inside it never awaits `kept`, and a failed read must not become an
    // unhandled rejection (which ends the process).
    kept.catch(() => undefined);
    const job = await withInput(queued, kept, ctx.entryBytes);
    const log = deps.logger.child({
      requestId: queued.requestId,
      functionId: queued.functionId,
      versionId: queued.versionId,
    });
    if (!job) {
      // Only an expired request loses its input (both share the TTL): answer it, if anyone still can.
      log.warn('job skipped: its stored input is gone (the request expired)');
      const gone = problemResult(
        'INTERNAL',
        'Internal error: the invocation input expired before a worker took it',
        'nvcf-worker-service',
        queued.requestId,
      );
      return gone;
    }
    const started = performance.now();
    let result: InvocationResult;
    /** The answer already went out as events (a generation or a chunked batch streamed as it ran). */
    let eventsSent = false;
    const events = countAppends(deps.events);
    try {
      ({ result, eventsSent } = await answerJob(job, events));
    } catch (err) {
      if (isAppError(err) && !err.retryable) {
        result = problemResult(err.code, err.message, 'inference-service', job.requestId);
      } else if (ctx.attempt < ctx.maxAttempts) {
        log.warn({ err, attempt: ctx.attempt }, 'inference failed; will retry');
        throw err;
      } else {
        log.error({ err, attempt: ctx.attempt }, 'inference failed; giving up');
        result = problemResult(
          'INTERNAL',
          'Internal error while making inference request',
          'nvcf-worker-service',
          job.requestId,
        );
      }
    }
    // When the answer already went out as events, the stored result is only what a later poll sees.
    if (job.stream && !eventsSent) {
      // SSE: a function that answers once is one event, then the end of the stream. A failure after
      // the stream started is its last event, marked as an error. A refusal before any output is no
      // event at all: the gateway, still holding the response, answers it with its HTTP status, as
      // the same call without SSE is answered. No 302 transform applies to a stream.
      const data = result.body.toString('utf8');
      if (result.ok) await events.append(job.requestId, [{ data, last: true }]);
      else if (events.appended) await events.append(job.requestId, [{ data, last: true, error: true }]);
    } else if (!job.stream && !job.directOnly) {
      // A caller that cannot follow a 302 (gRPC) gets every result direct.
      result = await deps.largeResults.settle(job.requestId, result);
    }
    log.debug({ status: result.status, ms: Math.round(performance.now() - started) }, 'job done');
    // The consumer stores it as the job leaves the queue (one step).
    return result;
  };
}
