import { type InferenceCore, startInferenceCore } from '@nvcf/inference-server';
import type { Logger } from '@nvcf/service-kit';
import type { WorkerConfig } from '../config.ts';
import {
  createFunctionModelLoader,
  ownedFunctionModels,
  removeUnreferencedFunctionModels,
} from '../function-models.ts';
import type { WorkerInfrastructure } from './worker-infrastructure.ts';

/** The inference core over the model repository, and the functions' own (uploaded) models brought into it. */
export interface InferencePlane {
  core: InferenceCore;
  functionModels: ReturnType<typeof createFunctionModelLoader>;
  /** Closes the core: after every surface and consumer using it. */
  close(): Promise<void>;
}

export async function startInferencePlane(
  infra: WorkerInfrastructure,
  config: WorkerConfig,
  log: Logger,
): Promise<InferencePlane> {
  // A function version deleted while this worker was down must not be loaded again (the first sync would
  // unload it, but it would be served until then). Without Redis yet, that first sync does it.
  await infra.registry
    .list()
    .then((fvs) => removeUnreferencedFunctionModels(config.modelRepository, ownedFunctionModels(fvs), log))
    .catch((err: unknown) => log.warn({ err }, 'could not look for deleted function models before loading'));
  const { tracing } = infra;
  const core = await startInferenceCore(config, log, tracing.enabled ? { tracer: tracing.tracer } : {});
  return {
    core,
    functionModels: createFunctionModelLoader({
      core,
      objects: infra.objects,
      repository: config.modelRepository,
      log,
      archiveLimits: { maxBytes: config.modelArchiveMaxBytes, maxRatio: config.modelArchiveMaxRatio },
    }),
    close: () => core.close(),
  };
}
