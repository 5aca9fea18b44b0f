import { createRateLimiter } from '@nvcf/control-store';
import {
  type CompletionWaiter,
  createCompletionWaiter,
  createEventStream,
  createIdempotencyStore,
  createInvocationProducer,
  createQueueStats,
  createRequestStore,
  createResultObjectIndex,
  createSequenceRouter,
  type EventStream,
  failureResult,
  type InvocationProducer,
  newGatewayId,
  type RequestStore,
  resultObjectKey,
} from '@nvcf/queue';
import { type CallerLimiter, createCallerLimiter } from '../auth/caller-limiter.ts';
import type { GatewayConfig } from '../config.ts';
import { createFunctionResolver, type FunctionResolver } from '../invocation/function-resolver.ts';
import { createInvocationService, type InvocationService } from '../invocation/invocation-service.ts';
import { createQueueGuard } from '../invocation/queue-guard.ts';
import { createQueueService, type QueueService } from '../invocation/queue-service.ts';
import { createRequestAccessCheck } from '../invocation/request-access.ts';
import { createRequestCancellation, type RequestCancellation } from '../invocation/request-cancellation.ts';
import { subscribeInvocationMetrics } from '../metrics/invocation-metrics.ts';
import { registerQueueMetrics } from '../metrics/queue-metrics.ts';
import { createResultLinks, type ResultLinks } from '../results/result-links.ts';
import type { ControlPlane, InvocationHooks } from './control-plane.ts';
import type { GatewayInfrastructure } from './gateway-infrastructure.ts';

/** Requests from acceptance to delivery: queues, the request store, completions, event streams and results. */
export interface InvocationPlane extends InvocationHooks {
  resolver: FunctionResolver;
  /**
   * Long-polls and gRPC calls wait on it. The gateway's drain ends and closes it (server.ts): its close is what lets
   * the surfaces' last calls end, so it is not part of `close()`.
   */
  completions: CompletionWaiter;
  store: RequestStore;
  invocations: InvocationService;
  /** Queue depths, live workers and a request's position, as callers read them. */
  queues: QueueService;
  events: EventStream;
  cancellation: RequestCancellation;
  results: ResultLinks;
  limiter: CallerLimiter;
  /** Stops deleting expired stored results. */
  stopSweeping(): void;
  /** Closes the producer: after every surface closed, as a call in progress may still enqueue. */
  close(): Promise<void>;
}

export async function startInvocationPlane(
  infra: GatewayInfrastructure,
  control: ControlPlane,
  config: GatewayConfig,
): Promise<InvocationPlane> {
  const { redis, keys } = infra;
  const completions = createCompletionWaiter(infra.subscriber, keys, newGatewayId());
  await completions.start();
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const producer = createInvocationProducer(redis, keys, {
    attempts: config.jobAttempts,
    ttlSeconds: config.requestTtlSeconds,
    maxVersionBytes: config.maxQueueBytesPerVersion,
  });
  const resolver = createFunctionResolver(control.registry, control.authorizationStore, {
    cacheMs: config.functionCacheMs,
  });
  const invocations = createMeteredInvocations({ infra, control, config, resolver, completions, store, producer });
  const events = createEventStream(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const results = startResultLinks(infra, config);
  return {
    resolver,
    completions,
    store,
    invocations,
    queues: createQueueService({
      access: control.access,
      workers: control.registry,
      producer,
      store,
      requestAccess: createRequestAccessCheck(resolver),
    }),
    events,
    cancellation: createRequestCancellation({ store, producer, events }),
    results: results.links,
    limiter: createCallerLimiter(
      createRateLimiter(redis, keys, { limit: config.rateLimitPerMinute, windowSeconds: 60 }),
      createRateLimiter(redis, keys, { limit: config.rateLimitPerAccountPerMinute, windowSeconds: 60 }),
    ),
    retireQueue: (versionId) =>
      producer.retire(versionId, async (requestId) => {
        const gone = `function version '${versionId}' was deleted before this request ran`;
        await store.complete(requestId, failureResult('NOT_FOUND', gone, { source: 'nvcf-gateway', requestId }));
      }),
    stopSweeping: () => clearInterval(results.sweeper),
    close: () => producer.close(),
  };
}

interface InvocationParts {
  infra: GatewayInfrastructure;
  control: ControlPlane;
  config: GatewayConfig;
  resolver: FunctionResolver;
  completions: CompletionWaiter;
  store: RequestStore;
  producer: InvocationProducer;
}

/** The invocation service, its lifecycle events and the queues' depths counted on the metrics port. */
function createMeteredInvocations(parts: InvocationParts): InvocationService {
  const { infra, control, config, producer } = parts;
  const { redis, keys, log, tracing, metrics } = infra;
  registerQueueMetrics(
    metrics.registry,
    { functions: control.registry, stats: createQueueStats(redis, keys) },
    {
      cacheMs: config.metricsQueueCacheMs,
      onError: (err) => log.warn({ err }, 'reading queue depths for the metrics failed'),
    },
  );
  const invocations = createInvocationService({
    functions: parts.resolver,
    queueGuard: createQueueGuard(producer, {
      maxDepth: config.maxQueueDepth,
      maxAccountBytes: config.maxQueueBytesPerAccount,
      cacheMs: 250,
    }),
    store: parts.store,
    producer,
    completions: parts.completions,
    idempotency: createIdempotencyStore(redis, keys, { ttlSeconds: config.requestTtlSeconds }),
    maxInlineResultBytes: config.maxInlineResultBytes,
    maxJobInputBytes: config.maxJobInputBytes,
    sequences: createSequenceRouter(redis, keys, control.registry, { ttlSeconds: config.sequenceOwnerTtlSeconds }),
    ...(tracing.enabled ? { traceContext: () => tracing.inject() } : {}),
    onBackgroundError: (err, requestId) => log.warn({ err, requestId }, 'marking an inline result delivered failed'),
    onEventError: (err, event) => log.warn({ err, event }, 'an invocation event listener failed'),
  });
  subscribeInvocationMetrics(invocations.events, metrics, { maxTracked: 50_000 });
  return invocations;
}

/** Links to stored large results, and the sweep that deletes them once their time is up (any gateway may do it). */
function startResultLinks(
  { redis, keys, log, objects, signingSecret }: GatewayInfrastructure,
  config: GatewayConfig,
): { links: ResultLinks; sweeper: NodeJS.Timeout } {
  const links = createResultLinks({
    objects,
    signingSecret,
    objectKey: resultObjectKey,
    logger: log,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
  });
  const resultIndex = createResultObjectIndex(redis, keys);
  const sweeper = setInterval(() => {
    resultIndex
      .takeExpired(100)
      .then((due) => Promise.all(due.map((key) => objects.delete(key))))
      .catch((err: unknown) => log.warn({ err }, 'reclaiming expired results failed'));
  }, config.storageSweepMs);
  sweeper.unref();
  return { links, sweeper };
}
