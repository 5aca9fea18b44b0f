import type { Logger } from '@nvcf/service-kit';
import { SessionCache } from '../runtime/session-cache.ts';
import type { InferenceCore } from './core-types.ts';
import { createInferenceCore } from './inference-core.ts';

export interface CoreConfig {
  modelRepository: string;
  executionProviders: string[];
  intraOpThreads: number;
  interOpThreads: number;
}

/** Builds the core over a model repository and loads every model in it. */
export async function startInferenceCore(config: CoreConfig, logger: Logger): Promise<InferenceCore> {
  const sessions = new SessionCache({
    executionProviders: config.executionProviders,
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: config.interOpThreads,
    logger,
  });
  const core = createInferenceCore({ repository: config.modelRepository, sessions, logger });
  await core.start();
  return core;
}
