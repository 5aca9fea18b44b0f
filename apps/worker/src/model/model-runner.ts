import type { InferenceCore, ModelRef } from '@nvcf/inference-server';
import type { EventStream, InvocationResult, RequestStore } from '@nvcf/queue';
import type { JobDecoder } from './job-decoding.ts';
import type { ModelJob } from './job-input.ts';

/** A runner's answer to one job. */
export interface RunnerAnswer {
  result: InvocationResult;
  /** The answer already went out as events (a generation or a chunked batch streamed as it ran). */
  eventsSent: boolean;
}

/**
 * How a model version's jobs run, chosen when the version starts being served, and again when its model reloads
 * (runner-for.ts), from what its model is: decoupled or not, a text generation signature or not. A refusal (a non-retryable AppError) or a failure
 * is thrown; the processor answers either.
 */
export type ModelRunner = (job: ModelJob, events: EventStream) => Promise<RunnerAnswer>;

/** What every model runner runs with. */
export interface ModelRunnerDeps {
  core: InferenceCore;
  model: ModelRef;
  /** The job's body as the model's call, asset inputs read (the one decoding every runner shares). */
  decode: JobDecoder;
  /** Where a request answered at once reports its progress to pollers. */
  store: Pick<RequestStore, 'reportProgress'>;
}
