import type { RequestStore } from '@nvcf/queue';
import { createDecoupledRunner } from './decoupled-runner.ts';
import { createGenerationRunner } from './generation-runner.ts';
import { createJobDecoder, type JobDecodingDeps } from './job-decoding.ts';
import type { ModelRunner } from './model-runner.ts';
import { textGenerationOf } from './openai-completions.ts';
import { createUnaryRunner } from './unary-runner.ts';

export interface RunnerChoiceDeps extends JobDecodingDeps {
  store: Pick<RequestStore, 'reportProgress'>;
  /** A streaming request's batch is answered this many rows at a time, one event each (0: whole). */
  streamChunkRows: number;
}

/**
 * The runner of a model version's jobs, chosen once, when the version starts being served (its model is loaded
 * then): a decoupled model answers with its responses one by one, any other model once; a model with a text
 * generation signature also answers OpenAI-style completion and chat requests.
 */
export function runnerFor(deps: RunnerChoiceDeps): ModelRunner {
  const { core, model } = deps;
  const shared = { core, model, store: deps.store, decode: createJobDecoder(deps) };
  const kserve = core.isDecoupled(model.name, model.version)
    ? createDecoupledRunner(shared)
    : createUnaryRunner({ ...shared, streamChunkRows: deps.streamChunkRows });
  // A model unloaded again before its consumer starts generates no text, as the core holds an unknown model not
  // decoupled: its jobs' calls report it in their own words until the next sync stops serving it.
  const generation = core.isModelReady(model.name, model.version)
    ? textGenerationOf(core.modelMetadata(model.name, model.version))
    : undefined;
  return generation ? createGenerationRunner(shared, generation, kserve) : kserve;
}
