import type { FunctionVersion } from '@nvcf/control-store';
import type { InvocationProcessor } from '@nvcf/queue';
import { tracingOff } from '@nvcf/service-kit';
import type { ConsumerSyncDeps } from './consumer-sync.ts';
import { createContainerProcessor } from './container/container-processor.ts';
import { createSharedTicker } from './container/shared-ticker.ts';
import { createModelProcessor } from './model/model-processor.ts';
import { runnerFor } from './model/runner-for.ts';
import { isContainer, isModel } from './served-versions.ts';
import { tracedProcessor } from './traced-processor.ts';

/**
 * The processor of a function version's jobs, made when the version starts being served: its container's server, or
 * its model through the runner its model calls for (runner-for.ts); traced (its metrics subscribe to the consumer's job events).
 */
export type ProcessorFactory = (fv: FunctionVersion) => InvocationProcessor;

export function createJobProcessors(deps: ConsumerSyncDeps): ProcessorFactory {
  const { core, config, log } = deps;
  const tracing = deps.tracing ?? tracingOff;
  /** Container requests' progress files and streaming clients, checked on one timer (every 200 ms while any). */
  const ticker = createSharedTicker(200);

  const processorFor = (fv: FunctionVersion): InvocationProcessor => {
    if (isContainer(fv)) {
      return createContainerProcessor({
        fv,
        server: () => deps.containers.instance(fv.versionId),
        store: deps.store,
        events: deps.events,
        objects: deps.objects,
        largeResults: deps.largeResults,
        logger: log,
        workDir: config.container.workDir,
        timeoutMs: config.container.timeoutMs,
        maxResponseBytes: config.maxDirectResultBytes,
        ticker,
        ...(tracing.enabled ? { traceContext: () => tracing.inject() } : {}),
      });
    }
    if (!isModel(fv)) throw new Error(`function version ${fv.versionId} has neither a model nor a container`);
    const runner = runnerFor({
      core,
      model: { name: fv.model.name, version: fv.model.version },
      store: deps.store,
      objects: deps.objects,
      maxTensorElements: config.maxTensorElements,
      streamChunkRows: config.streamChunkRows,
    });
    return createModelProcessor({
      store: deps.store,
      logger: log,
      largeResults: deps.largeResults,
      events: deps.events,
      runner,
    });
  };
  // Traced as a wrapper: the job's span must be the active one while the processor runs. Metrics subscribe to the
  // consumer's job events instead (version-consumers.ts).
  return (fv) => tracedProcessor(processorFor(fv), tracing);
}
