import type { FunctionAuthorizationStore, FunctionRegistry, FunctionSecretStore } from '@nvcf/control-store';
import type { InferenceCore } from '@nvcf/inference-server';
import type { Keys, RedisClient, RequestStore } from '@nvcf/queue';
import type { Logger, Tracing } from '@nvcf/service-kit';
import type { WorkerConfig } from './config.ts';
import type { ContainerServers } from './container/container-servers.ts';
import { type createFunctionModelLoader, ownedFunctionModels } from './function-models.ts';
import type { JobMetrics } from './job-metrics.ts';
import { createJobProcessors } from './job-processors.ts';
import type { ModelProcessorDeps } from './model/model-processor.ts';
import type { RunnerChoiceDeps } from './model/runner-for.ts';
import { concurrencyFor, publishLoadedModels, servesVersion, wantedVersions } from './served-versions.ts';
import { createVersionConsumers } from './version-consumers.ts';

export interface ConsumerSync {
  /** Function version ids consumed right now. */
  versionIds(): string[];
  /** Publishes the loaded models as functions, then consumes every deployed version they can serve. */
  sync(): Promise<void>;
  /** Stops every consumer; in-flight jobs finish unless `force`. */
  close(force?: boolean): Promise<void>;
}

export interface ConsumerSyncDeps {
  core: InferenceCore;
  registry: FunctionRegistry;
  store: RequestStore;
  keys: Keys;
  connection: RedisClient;
  config: WorkerConfig;
  log: Logger;
  functionModels: ReturnType<typeof createFunctionModelLoader>;
  largeResults: ModelProcessorDeps['largeResults'];
  events: ModelProcessorDeps['events'];
  objects: RunnerChoiceDeps['objects'];
  /** The inference servers of container functions (sidecar or processes). */
  containers: ContainerServers;
  /** Container functions' secrets, handed to their servers. */
  secrets: FunctionSecretStore;
  /** Repository models' functions' authorized accounts: another account's version is served while it may use one. */
  authorizations: Pick<FunctionAuthorizationStore, 'get'>;
  /** OpenTelemetry: each job's queue wait and processing as spans of its invocation's trace. */
  tracing?: Tracing;
  /** Each job's queue wait, processing time and outcome, served on the metrics port. */
  jobMetrics: JobMetrics;
}

/**
 * Which queues this worker consumes follows the registry: a function version is consumed while it is
 * deployed and its model is loaded here. Newly deployed versions start being consumed, undeployed or
 * deleted ones stop (gracefully: their in-flight jobs finish; a deleted version's uploaded model is then
 * unloaded and removed). With `WORKER_FUNCTION_VERSIONS`, only the listed versions are consumed: one
 * Deployment per version, scaled on that version's queue alone.
 *
 * A consumer's concurrency follows its model (model-capacity.ts), raised to the deployment's
 * `maxRequestConcurrency` when that asks for more; `WORKER_CONCURRENCY` > 0 fixes it instead.
 *
 * A container function's version is consumed while its inference server (a sidecar, or a process this worker
 * runs) answers its health check, so its heartbeat, and its ACTIVE status, follow health; its concurrency is
 * the deployment's `maxRequestConcurrency`, the requests in flight to one server instance.
 */
export function createConsumerSync(deps: ConsumerSyncDeps): ConsumerSync {
  const { registry, config, log } = deps;
  const serves = servesVersion(config.functionVersionIds);
  const consumers = createVersionConsumers(deps, createJobProcessors(deps));
  return {
    versionIds: () => consumers.versionIds(),
    async sync() {
      const loaded = await publishLoadedModels(deps);
      const versions = await registry.list();
      const wanted = await wantedVersions(deps, versions, loaded, serves);
      for (const fv of wanted.values()) consumers.serve(fv, concurrencyFor(deps, fv));
      for (const versionId of consumers.versionIds()) {
        if (wanted.has(versionId)) continue;
        // Graceful: the version's in-flight jobs finish.
        await consumers.stop(versionId, async () => {
          await registry.removeWorker(config.workerId, [versionId]);
          log.info({ versionId }, 'no longer serving (undeployed, deleted, model unloaded or server unhealthy)');
        });
      }
      // After the consumers stopped: a deleted version's own model is unloaded and removed from disk.
      await deps.functionModels.prune(ownedFunctionModels(versions));
      await consumers.waitUntilReady();
    },
    async close(force = false) {
      await consumers.close(force);
      // After the consumers: their in-flight requests were still talking to these servers.
      await deps.containers.close();
    },
  };
}
