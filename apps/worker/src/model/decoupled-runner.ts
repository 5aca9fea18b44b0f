import type { CoreInferRequest, CoreInferResponse, InferenceCore } from '@nvcf/inference-server';
import { AppError, encodeHttpInferResponse } from '@nvcf/protocol';
import { type EventStream, type InvocationResult, type RequestStore, successResult } from '@nvcf/queue';
import type { ModelJob } from './job-input.ts';
import type { ModelRunner, ModelRunnerDeps } from './model-runner.ts';

/**
 * A decoupled model (Triton's decoupled transaction policy): its responses one by one (`runDecoupled`), in KServe V2
 * JSON. A unary gRPC call is refused.
 */
export function createDecoupledRunner(deps: ModelRunnerDeps): ModelRunner {
  return async (job, events) => {
    const call = await deps.decode(job);
    // A unary gRPC call has room for one response; Triton refuses it in these words.
    if (job.respond === 'kserve-grpc') {
      throw new AppError('UNIMPLEMENTED', "ModelInfer RPC doesn't support models with decoupled transaction policy");
    }
    const request = { ...call.request, inputsOwned: true };
    const target = decoupledTarget(job, events, deps.store);
    const result = await runDecoupled(deps.core, request, target, kserveRendering(request, job.requestId));
    return { result, eventsSent: job.stream === true };
  };
}

/**
 * How a decoupled model's responses reach the client: the protocol the request spoke decides (KServe V2 below,
 * OpenAI's chat and completions in openai-completions.ts); the mechanism is the same.
 */
export interface DecoupledRendering {
  /** One response as the event a streaming client gets as soon as the model made it. */
  event(response: CoreInferResponse): string;
  /** The events that close a stream, the last one ending it; `cancelled`: the client went away first. */
  closing(cancelled: boolean): string[];
  /** The request's result once complete: every response in one answer, or (streamed) what a later poll reads. */
  result(responses: CoreInferResponse[], how: { streamed: boolean; cancelled: boolean }): InvocationResult;
  /** Not streaming: what a poll in between sees after these responses (NVCF progress); undefined for nothing new. */
  progress?(responses: CoreInferResponse[]): { percent: number; partial: Buffer } | undefined;
}

/** How often a request checks that it was not cancelled while the model makes no response. */
const CANCEL_CHECK_MS = 250;

export interface DecoupledTarget {
  requestId: string;
  /** Set when the client reads server-sent events. */
  stream?: { events: EventStream };
  /**
   * Where a cancel of the request is heard, streaming or not: a streaming client that left, or the owner's explicit
   * cancel (`DELETE /v2/nvcf/pexec/status/{reqId}`). Defaults to the stream's events.
   */
  cancels?: Pick<EventStream, 'isCancelled'>;
  /** Reports progress to pollers (used only without a stream). */
  reportProgress?: (percent: number, partial: Buffer) => Promise<unknown>;
}

/** Where a job's responses go: its stream when the client reads events, progress reports otherwise. */
export function decoupledTarget(
  job: ModelJob,
  events: EventStream,
  store: Pick<RequestStore, 'reportProgress'>,
): DecoupledTarget {
  return {
    requestId: job.requestId,
    ...(job.stream ? { stream: { events } } : {}),
    cancels: events,
    reportProgress: (percent: number, partial: Buffer) => store.reportProgress(job.requestId, percent, partial),
  };
}

/**
 * A decoupled model's request through the queue (Triton's decoupled transaction policy): one request, any number of
 * responses, then completion. Streaming, each response is an event as soon as the model makes it, in order; a
 * client that goes away (its reader marks the request cancelled), or a cancel by the request's owner, stops the
 * model between responses, and the rendering closes the stream.
 * Not streaming, the responses become one answer, with progress reported on the way where the rendering has any.
 */
export async function runDecoupled(
  core: InferenceCore,
  request: CoreInferRequest,
  target: DecoupledTarget,
  rendering: DecoupledRendering,
): Promise<InvocationResult> {
  const { requestId, stream } = target;
  const responses: CoreInferResponse[] = [];
  const stop = new AbortController();
  // Appends leave one at a time, in order, while the model goes on; so do progress reports.
  let sent: Promise<unknown> = Promise.resolve();
  let checking = false;
  const cancels = target.cancels ?? stream?.events;
  const watchCancel = (events: Pick<EventStream, 'isCancelled'>) => {
    // One check in flight at a time: the model never waits for Redis, and Redis never sees a check per token.
    if (checking) return;
    checking = true;
    events.isCancelled(requestId).then(
      (cancelled) => {
        checking = false;
        if (cancelled) stop.abort();
      },
      () => {
        checking = false;
      },
    );
  };
  const onResponse = (response: CoreInferResponse) => {
    responses.push(response);
    if (cancels) watchCancel(cancels);
    if (stream) {
      const data = rendering.event(response);
      sent = sent.then(() => stream.events.append(requestId, [{ data }]));
      return;
    }
    const report = target.reportProgress && rendering.progress?.(responses);
    if (report && target.reportProgress) {
      const reportProgress = target.reportProgress;
      sent = sent.then(() => reportProgress(report.percent, report.partial));
    }
  };
  let cancelled = false;
  // Also between responses: a model that waits long for its next one still hears that it was cancelled.
  const ticker = cancels ? setInterval(() => watchCancel(cancels), CANCEL_CHECK_MS) : undefined;
  try {
    await core.inferDecoupled({ ...request, signal: stop.signal }, onResponse);
  } catch (err) {
    // Stopped by a cancel: the stream still closes, as it does after the last response. Whatever the model threw
    // once stopped (CANCELLED, or a backend's own AbortError from a wait it was in) is that stop, not a failure.
    if (!stop.signal.aborted) throw err;
    cancelled = true;
  } finally {
    clearInterval(ticker);
    await sent;
  }
  if (stream) {
    const closing = rendering.closing(cancelled);
    await stream.events.append(
      requestId,
      closing.map((data, i) => ({ data, ...(i === closing.length - 1 ? { last: true } : {}) })),
    );
  }
  return rendering.result(responses, { streamed: stream !== undefined, cancelled });
}

/** One response as KServe V2 JSON, marked as Triton marks a decoupled model's responses. */
function kserveJson(res: CoreInferResponse, final: boolean): string {
  return encodeHttpInferResponse({
    model_name: res.modelName,
    model_version: res.modelVersion,
    ...(res.id !== undefined ? { id: res.id } : {}),
    parameters: { ...res.parameters, triton_final_response: final },
    outputs: res.outputs,
  }).body.toString('utf8');
}

const json = (value: unknown): InvocationResult =>
  successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(value)) });

/**
 * KServe V2 JSON, as Triton answers a decoupled model. Streaming, each response is an event with
 * `triton_final_response: false`, and an empty response with `triton_final_response: true` closes the stream, as
 * Triton's empty final response does. Not streaming, the answer is every response in one JSON document,
 * `{"responses": [...]}`, in the order made.
 */
export function kserveRendering(request: CoreInferRequest, requestId: string): DecoupledRendering {
  return {
    event: (response) => kserveJson(response, false),
    closing: () => [
      JSON.stringify({
        model_name: request.modelName,
        model_version: request.modelVersion ?? '',
        ...(request.id !== undefined ? { id: request.id } : {}),
        parameters: { triton_final_response: true },
        outputs: [],
      }),
    ],
    result(responses, { streamed }) {
      if (streamed)
        return json({ id: requestId, streamed: true, detail: 'a decoupled model: answered as server-sent events' });
      const body = `{"responses":[${responses.map((r) => kserveJson(r, false)).join(',')}]}`;
      return successResult({ contentType: 'application/json', body: Buffer.from(body) });
    },
  };
}
