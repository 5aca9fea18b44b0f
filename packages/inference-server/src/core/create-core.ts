import { availableParallelism } from 'node:os';
import type { Logger } from '@nvcf/service-kit';
import type { Tracer } from '@opentelemetry/api';
import { SessionCache } from '../runtime/session-cache.ts';
import type { InferenceCore } from './core-types.ts';
import { createInferenceCore } from './inference-core.ts';

export interface CoreConfig {
  modelRepository: string;
  executionProviders: string[];
  intraOpThreads: number;
  interOpThreads: number;
  /** Runs measured under this many µs execute on the event loop (runtime/inline-runs.ts); absent or 0: never. */
  inlineMaxMicros?: number;
  /** Instances of a model whose config names no count: 0 one per core; absent, Triton's 2. */
  cpuInstances?: number;
}

export interface CoreExtras {
  /** OpenTelemetry: a `session.run` span per model run (absent: tracing off). */
  tracer?: Tracer;
}

/** Builds the core over a model repository and loads every model in it. */
export async function startInferenceCore(
  config: CoreConfig,
  logger: Logger,
  extras: CoreExtras = {},
): Promise<InferenceCore> {
  const sessions = new SessionCache({
    executionProviders: config.executionProviders,
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: config.interOpThreads,
    ...(config.inlineMaxMicros === undefined ? {} : { inlineMaxMicros: config.inlineMaxMicros }),
    logger,
  });
  const core = createInferenceCore({
    repository: config.modelRepository,
    sessions,
    logger,
    ...(extras.tracer ? { tracer: extras.tracer } : {}),
    ...(config.cpuInstances === undefined
      ? {}
      : { cpuInstances: config.cpuInstances > 0 ? config.cpuInstances : availableParallelism() }),
  });
  await core.start();
  return core;
}
