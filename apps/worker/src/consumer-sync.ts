import type {
  ContainerSpec,
  FunctionAuthorizationStore,
  FunctionModelSpec,
  FunctionRegistry,
  FunctionSecretStore,
  FunctionVersion,
} from '@nvcf/control-store';
import type { InferenceCore } from '@nvcf/inference-server';
import {
  createInvocationConsumer,
  type InvocationConsumer,
  type Keys,
  type RedisClient,
  type RequestStore,
} from '@nvcf/queue';
import { type Logger, type Tracing, tracingOff } from '@nvcf/service-kit';
import { isFunctionModelName } from '@nvcf/storage';
import type { WorkerConfig } from './config.ts';
import { createContainerProcessor } from './container/container-processor.ts';
import type { ContainerServers } from './container/container-servers.ts';
import { createSharedTicker } from './container/shared-ticker.ts';
import { readVersionSecrets } from './container/version-secrets.ts';
import { type createFunctionModelLoader, ownedFunctionModels } from './function-models.ts';
import { modelConcurrency } from './functions/model-capacity.ts';
import { modelFunctionVersion } from './functions/model-functions.ts';
import { repositoryModelAccess } from './functions/repository-model-access.ts';
import { problemResult } from './inference/problem-result.ts';
import { createInvocationProcessor, type ProcessorDeps } from './invocation-processor.ts';
import { type JobMetrics, meteredProcessor } from './job-metrics.ts';
import { tracedProcessor } from './traced-processor.ts';

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
  largeResults: ProcessorDeps['largeResults'];
  events: ProcessorDeps['events'];
  objects: ProcessorDeps['objects'];
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

type ModelVersion = FunctionVersion & { model: FunctionModelSpec };
type ContainerVersion = FunctionVersion & { container: ContainerSpec };
const isContainer = (fv: FunctionVersion): fv is ContainerVersion => fv.container !== undefined;
const isModel = (fv: FunctionVersion): fv is ModelVersion => fv.model !== undefined;

const modelKey = (name: string, version: string) => `${name}\u0000${version}`;

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
  const { core, registry, config, log } = deps;
  const tracing = deps.tracing ?? tracingOff;
  const consumers = new Map<string, InvocationConsumer>();
  /** This worker's own queue per sequence-model version: the requests of the sequences it owns. */
  const ownQueues = new Map<string, InvocationConsumer>();
  const only = new Set(config.functionVersionIds);
  /** Container requests' progress files and streaming clients, checked on one timer (every 200 ms while any). */
  const ticker = createSharedTicker(200);
  /** `WORKER_FUNCTION_VERSIONS`: a pool serving listed versions only (empty: every version). */
  const serves = (versionId: string) => only.size === 0 || only.has(versionId);

  const concurrencyFor = (fv: FunctionVersion): number => {
    if (!isModel(fv)) return fv.deployment?.maxRequestConcurrency ?? 1;
    if (config.concurrency > 0) return config.concurrency;
    const model = modelConcurrency(core.modelConfig(fv.model.name, fv.model.version));
    return Math.max(model, fv.deployment?.maxRequestConcurrency ?? 1);
  };

  const processorFor = (fv: FunctionVersion) => {
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
    return createInvocationProcessor({
      store: deps.store,
      core,
      model: { name: fv.model.name, version: fv.model.version },
      logger: log,
      maxTensorElements: config.maxTensorElements,
      largeResults: deps.largeResults,
      events: deps.events,
      objects: deps.objects,
      streamChunkRows: config.streamChunkRows,
    });
  };

  const start = (fv: FunctionVersion, concurrency: number) => {
    const processor = tracedProcessor(meteredProcessor(processorFor(fv), deps.jobMetrics), tracing);
    const options = {
      concurrency,
      workerId: config.workerId,
      lockDurationMs: config.lockDurationMs,
      stalledIntervalMs: config.stalledIntervalMs,
      maxStalledCount: config.maxStalledCount,
      failure: (requestId: string, reason: string) => {
        log.error({ requestId, versionId: fv.versionId, reason }, 'job failed');
        return problemResult(
          'INTERNAL',
          'Internal error while making inference request',
          'nvcf-worker-service',
          requestId,
        );
      },
    };
    const queueDeps = { connection: deps.connection, keys: deps.keys, store: deps.store };
    const consumer = createInvocationConsumer(queueDeps, fv.versionId, processor, options);
    consumer.on('error', (err) => log.error({ err, versionId: fv.versionId }, 'consumer error'));
    consumers.set(fv.versionId, consumer);
    if (fv.model?.sequence) {
      const own = createInvocationConsumer(queueDeps, fv.versionId, processor, { ...options, ownQueue: true });
      own.on('error', (err) => log.error({ err, versionId: fv.versionId, ownQueue: true }, 'consumer error'));
      ownQueues.set(fv.versionId, own);
    }
    log.info(
      {
        function: fv.name,
        functionId: fv.id,
        versionId: fv.versionId,
        ...(fv.model ? { model: fv.model.name } : { container: fv.container?.image }),
        concurrency,
      },
      'serving',
    );
  };

  return {
    versionIds: () => [...consumers.keys()],
    async sync() {
      const loaded = (await core.repositoryIndex({ readyOnly: true })).filter((e) => e.version !== undefined);
      const here = new Set<string>();
      for (const entry of loaded) {
        const version = entry.version as string;
        here.add(modelKey(entry.name, version));
        // A function's own model (from an asset) is not a repository function of its own.
        if (isFunctionModelName(entry.name)) continue;
        const modelConfig = core.modelConfig(entry.name, version);
        const concurrency = config.concurrency || modelConcurrency(modelConfig);
        const sequence = modelConfig.extra.sequence_batching !== undefined;
        await registry.seed(
          modelFunctionVersion(core.modelMetadata(entry.name, version), version, config.ncaId, concurrency, {
            sequence,
          }),
        );
      }
      const wanted = new Map<string, FunctionVersion>();
      const versions = await registry.list();
      const containers = versions.filter((fv) => isContainer(fv) && fv.deployment && serves(fv.versionId));
      const served = containers.filter(isContainer);
      // Read each sync: a secrets PUT is announced as a deployment change, so it reaches the servers at once.
      const secrets = deps.containers.mode === 'none' ? undefined : await readVersionSecrets(deps.secrets, served);
      await deps.containers.want(served, secrets);
      for (const fv of containers) {
        if (deps.containers.instance(fv.versionId)?.healthy) wanted.set(fv.versionId, fv);
      }
      const mayServe = await repositoryModelAccess(versions.filter(isModel), deps.authorizations);
      for (const fv of versions) {
        // Before the model is fetched: a worker pool never downloads the models of versions it does not serve.
        if (!fv.deployment || !serves(fv.versionId) || !isModel(fv)) continue;
        // An uploaded model is served for the version that uploaded it only, never by its name for another.
        if (isFunctionModelName(fv.model.name)) {
          if (await deps.functionModels.ensure(fv)) wanted.set(fv.versionId, fv);
          continue;
        }
        if (here.has(modelKey(fv.model.name, fv.model.version)) && mayServe(fv)) wanted.set(fv.versionId, fv);
      }
      for (const [versionId, fv] of wanted) {
        const concurrency = concurrencyFor(fv);
        const running = consumers.get(versionId);
        if (!running) start(fv, concurrency);
        else if (running.concurrency !== concurrency) {
          running.concurrency = concurrency;
          const own = ownQueues.get(versionId);
          if (own) own.concurrency = concurrency;
        }
      }
      for (const [versionId, consumer] of consumers) {
        if (wanted.has(versionId)) continue;
        consumers.delete(versionId);
        await registry.removeWorker(config.workerId, [versionId]);
        log.info({ versionId }, 'no longer serving (undeployed, deleted, model unloaded or server unhealthy)');
        const own = ownQueues.get(versionId);
        ownQueues.delete(versionId);
        // Graceful: the version's in-flight jobs finish.
        await Promise.all([consumer.close(), own?.close()]);
      }
      // After the consumers stopped: a deleted version's own model is unloaded and removed from disk.
      await deps.functionModels.prune(ownedFunctionModels(versions));
      await Promise.all([...consumers.values(), ...ownQueues.values()].map((c) => c.waitUntilReady()));
    },
    async close(force = false) {
      await Promise.all([...consumers.values(), ...ownQueues.values()].map((c) => c.close(force)));
      // After the consumers: their in-flight requests were still talking to these servers.
      await deps.containers.close();
    },
  };
}
