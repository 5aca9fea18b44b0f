import { decoupledTarget, runDecoupled } from './decoupled-runner.ts';
import type { ModelRunner, ModelRunnerDeps } from './model-runner.ts';
import { completionCall, isCompletionBody, type TextGeneration } from './openai-completions.ts';

/**
 * A text generation model (openai-completions.ts): an OpenAI chat or completions request is generated response by
 * response, streamed as OpenAI's chunks or answered as one completion; any other body (a KServe V2 request) goes to
 * `kserve`, the runner the model's transaction policy picked, as it would for any other model.
 */
export function createGenerationRunner(
  deps: ModelRunnerDeps,
  generation: TextGeneration,
  kserve: ModelRunner,
): ModelRunner {
  const model = { ...deps.model, ...generation };
  return async (job, events) => {
    if (!isCompletionBody(job.input)) return kserve(job, events);
    const { request, rendering } = completionCall(job.input, model, job.requestId);
    const result = await runDecoupled(deps.core, request, decoupledTarget(job, events, deps.store), rendering);
    return { result, eventsSent: job.stream === true };
  };
}
