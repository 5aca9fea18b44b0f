import type { FunctionVersion } from '@nvcf/control-store';
import {
  createInvocationConsumer,
  failureResult,
  type InvocationConsumer,
  type InvocationProcessor,
} from '@nvcf/queue';
import type { ConsumerSyncDeps } from './consumer-sync.ts';
import { observeJobs } from './job-metrics.ts';
import type { ProcessorFactory } from './job-processors.ts';

/** The queue consumers running on this worker, one per served function version (two for a sequence model). */
export interface VersionConsumers {
  versionIds(): string[];
  /** Starts consuming the version's queue, or, when it is consumed already, moves it to `concurrency`. */
  serve(fv: FunctionVersion, concurrency: number): void;
  /** Stops consuming the version gracefully (its in-flight jobs finish), once `announce` has told the registry. */
  stop(versionId: string, announce: () => Promise<void>): Promise<void>;
  /** Resolves once every consumer reads its queue. */
  waitUntilReady(): Promise<void>;
  /** Stops every consumer; in-flight jobs finish unless `force`. */
  close(force: boolean): Promise<void>;
}

export function createVersionConsumers(deps: ConsumerSyncDeps, processorFor: ProcessorFactory): VersionConsumers {
  const consumers = new Map<string, InvocationConsumer>();
  /** This worker's own queue per sequence-model version: the requests of the sequences it owns. */
  const ownQueues = new Map<string, InvocationConsumer>();
  const all = () => [...consumers.values(), ...ownQueues.values()];

  const start = (fv: FunctionVersion, concurrency: number) => {
    const started = startConsumers(deps, processorFor(fv), fv, concurrency);
    consumers.set(fv.versionId, started.consumer);
    if (started.own) ownQueues.set(fv.versionId, started.own);
  };

  return {
    versionIds: () => [...consumers.keys()],
    serve(fv, concurrency) {
      const running = consumers.get(fv.versionId);
      if (!running) start(fv, concurrency);
      else if (running.concurrency !== concurrency) {
        running.concurrency = concurrency;
        const own = ownQueues.get(fv.versionId);
        if (own) own.concurrency = concurrency;
      }
    },
    async stop(versionId, announce) {
      const consumer = consumers.get(versionId);
      consumers.delete(versionId);
      await announce();
      const own = ownQueues.get(versionId);
      ownQueues.delete(versionId);
      await Promise.all([consumer?.close(), own?.close()]);
    },
    async waitUntilReady() {
      await Promise.all(all().map((c) => c.waitUntilReady()));
    },
    async close(force) {
      await Promise.all(all().map((c) => c.close(force)));
    },
  };
}

/** The version's queue consumer, and for a sequence model its own queue's (the requests of the sequences it owns). */
function startConsumers(
  { config, log, connection, keys, store, jobMetrics }: ConsumerSyncDeps,
  processor: InvocationProcessor,
  fv: FunctionVersion,
  concurrency: number,
): { consumer: InvocationConsumer; own?: InvocationConsumer } {
  const options = {
    concurrency,
    workerId: config.workerId,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    maxStalledCount: config.maxStalledCount,
    failure: (requestId: string, reason: string) => {
      log.error({ requestId, versionId: fv.versionId, reason }, 'job failed');
      return failureResult('INTERNAL', 'Internal error while making inference request', {
        source: 'nvcf-worker-service',
        requestId: requestId,
      });
    },
  };
  const queueDeps = { connection, keys, store };
  const consumer = createInvocationConsumer(queueDeps, fv.versionId, processor, options);
  const observe = observeJobs(jobMetrics);
  consumer.on('error', (err) => log.error({ err, versionId: fv.versionId }, 'consumer error'));
  consumer.on('job', observe);
  let own: InvocationConsumer | undefined;
  if (fv.model?.sequence) {
    own = createInvocationConsumer(queueDeps, fv.versionId, processor, { ...options, ownQueue: true });
    own.on('error', (err) => log.error({ err, versionId: fv.versionId, ownQueue: true }, 'consumer error'));
    own.on('job', observe);
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
  return own ? { consumer, own } : { consumer };
}
