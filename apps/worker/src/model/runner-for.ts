import type { ModelConfig } from '@nvcf/models';
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
 * The runner of a model version's jobs: a decoupled model answers with its responses one by one, any other model
 * once; a model with a text generation signature also answers OpenAI-style completion and chat requests. Chosen when
 * the version starts being served, and again only when its model is loaded anew (a reload through the repository
 * API may change its transaction policy or its signature): the loaded config is the model's identity.
 */
export function runnerFor(deps: RunnerChoiceDeps): ModelRunner {
  const { core, model } = deps;
  let chosen: { config: ModelConfig | undefined; runner: ModelRunner } | undefined;
  const loadedConfig = () =>
    core.isModelReady(model.name, model.version) ? core.modelConfig(model.name, model.version) : undefined;
  return (job, events) => {
    const config = loadedConfig();
    if (!chosen || chosen.config !== config) chosen = { config, runner: chooseRunner(deps) };
    return chosen.runner(job, events);
  };
}

function chooseRunner(deps: RunnerChoiceDeps): ModelRunner {
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
