import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  createApiKeyStore,
  createAssetStore,
  createFunctionAuthorizationStore,
  createFunctionRegistry,
  createFunctionSecretStore,
  createRateLimiter,
  createSecretCipher,
} from '@nvcf/control-store';
import { PROBLEM_CONTENT_TYPE, problem, SCOPES } from '@nvcf/protocol';
import {
  createCompletionWaiter,
  createEventStream,
  createIdempotencyStore,
  createInvocationProducer,
  createKeys,
  createQueueStats,
  createRedis,
  createRequestStore,
  createResultObjectIndex,
  createSequenceRouter,
  newGatewayId,
  resultObjectKey,
} from '@nvcf/queue';
import { createLogger, type Logger, startMetricsServer, startTracing } from '@nvcf/service-kit';
import { openObjectStore } from '@nvcf/storage';
import { createGatewayApp } from './app.ts';
import { createAssetService, urlSigningSecret } from './assets/index.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import { createCallerLimiter } from './auth/caller-limiter.ts';
import type { GatewayConfig } from './config.ts';
import { indexAccounts } from './control/account-index.ts';
import { createAuthorizationService } from './control/authorization-service.ts';
import { createFunctionAccess } from './control/function-access.ts';
import { createFunctionService } from './control/function-service.ts';
import { reencryptSecrets } from './control/secret-rotation.ts';
import { startGatewayGrpcServer } from './grpc/index.ts';
import { createFunctionResolver } from './invocation/function-resolver.ts';
import { createInvocationService } from './invocation/invocation-service.ts';
import { createQueueGuard } from './invocation/queue-guard.ts';
import { createRequestCancellation } from './invocation/request-cancellation.ts';
import { createGatewayMetrics } from './metrics/gateway-metrics.ts';
import { grpcMetricsInterceptor } from './metrics/grpc-metrics.ts';
import { subscribeInvocationMetrics } from './metrics/invocation-metrics.ts';
import { registerQueueMetrics } from './metrics/queue-metrics.ts';
import { createResultLinks } from './results/result-links.ts';

export interface RunningGateway {
  url: string;
  /** The gRPC port (0 when disabled). */
  grpcPort: number;
  /** The Prometheus metrics port (0 when disabled). */
  metricsPort: number;
  port: number;
  /** Stops accepting, lets open long-polls end, closes Redis. */
  close(): Promise<void>;
}

/** Starts a gateway: used by `main.ts`, by tests (port 0) and by the benchmark. */
export async function startGateway(config: GatewayConfig, logger?: Logger): Promise<RunningGateway> {
  const log = logger ?? createLogger({ name: 'gateway', level: config.logLevel });
  const tracing = startTracing(config.tracing);
  const keys = createKeys(config.keyPrefix);
  const redis = createRedis(config.redisUrl, {
    name: 'gateway',
    commandTimeoutMs: config.redisCommandTimeoutMs,
    onError: (err) => log.warn({ err: err.message }, 'Redis connection error'),
  });
  const subscriber = createRedis(config.redisUrl, { blocking: true, name: 'gateway-sub' });
  const completions = createCompletionWaiter(subscriber, keys, newGatewayId());
  await completions.start();
  const registry = createFunctionRegistry(redis, keys);
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const producer = createInvocationProducer(redis, keys, {
    attempts: config.jobAttempts,
    ttlSeconds: config.requestTtlSeconds,
    maxVersionBytes: config.maxQueueBytesPerVersion,
  });
  const authorizationStore = createFunctionAuthorizationStore(redis, keys);
  const functions = createFunctionResolver(registry, authorizationStore, { cacheMs: config.functionCacheMs });
  const access = createFunctionAccess(registry, authorizationStore);
  await indexAccounts(registry, authorizationStore, log);
  const metrics = createGatewayMetrics();
  registerQueueMetrics(
    metrics.registry,
    { functions: registry, stats: createQueueStats(redis, keys) },
    {
      cacheMs: config.metricsQueueCacheMs,
      onError: (err) => log.warn({ err }, 'reading queue depths for the metrics failed'),
    },
  );
  const invocations = createInvocationService({
    functions,
    queueGuard: createQueueGuard(producer, {
      maxDepth: config.maxQueueDepth,
      maxAccountBytes: config.maxQueueBytesPerAccount,
      cacheMs: 250,
    }),
    store,
    producer,
    completions,
    idempotency: createIdempotencyStore(redis, keys, { ttlSeconds: config.requestTtlSeconds }),
    maxInlineResultBytes: config.maxInlineResultBytes,
    maxJobInputBytes: config.maxJobInputBytes,
    sequences: createSequenceRouter(redis, keys, registry, { ttlSeconds: config.sequenceOwnerTtlSeconds }),
    ...(tracing.enabled ? { traceContext: () => tracing.inject() } : {}),
    onBackgroundError: (err, requestId) => log.warn({ err, requestId }, 'marking an inline result delivered failed'),
    onEventError: (err, event) => log.warn({ err, event }, 'an invocation event listener failed'),
  });
  subscribeInvocationMetrics(invocations.events, metrics, { maxTracked: 50_000 });
  const keyStore = createApiKeyStore(redis, keys);
  if (config.bootstrapAdminKey) {
    // Created once: a revoked bootstrap key stays revoked across restarts (set a new one to get a new admin).
    const boot = await keyStore.bootstrap({
      name: 'bootstrap-admin',
      scopes: [...SCOPES],
      secret: config.bootstrapAdminKey,
    });
    if (!boot.record || boot.record.revokedAt) {
      log.warn('NVCF_BOOTSTRAP_ADMIN_KEY was revoked; it is not created again');
    }
  }
  const auth = createAuthenticator({ keyStore, cacheMs: config.authCacheMs, jwt: config.jwt, ncaId: config.ncaId });
  const objects = await openObjectStore(config.objectStore);
  const signingSecret = urlSigningSecret(config.urlSigningSecret, (msg) => log.warn(msg));
  const results = createResultLinks({
    objects,
    signingSecret,
    objectKey: resultObjectKey,
    logger: log,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
  });
  // Stored large results are deleted once their time is up (any gateway may do it).
  const resultIndex = createResultObjectIndex(redis, keys);
  const resultSweeper = setInterval(() => {
    resultIndex
      .takeExpired(100)
      .then((due) => Promise.all(due.map((key) => objects.delete(key))))
      .catch((err: unknown) => log.warn({ err }, 'reclaiming expired results failed'));
  }, config.storageSweepMs);
  resultSweeper.unref();
  const assets = createAssetService({
    store: createAssetStore(redis, keys, { ttlSeconds: config.assetTtlSeconds }),
    objects,
    signingSecret,
    maxBytes: config.assetMaxBytes,
    quotaBytes: config.assetQuotaBytes,
    quotaCount: config.assetQuotaCount,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
  });
  const assetSweeper = assets.startSweeper(config.storageSweepMs, (err) =>
    log.warn({ err }, 'reclaiming expired assets failed'),
  );
  const { key: secretsKey, previousKey } = config.secrets;
  const secretStore = createFunctionSecretStore(
    redis,
    keys,
    secretsKey ? createSecretCipher({ key: secretsKey, ...(previousKey ? { previousKey } : {}) }) : undefined,
  );
  if (previousKey) {
    reencryptSecrets(registry, secretStore, log).catch((err: unknown) =>
      log.warn({ err }, 'rotating function secrets to NVCF_SECRETS_KEY failed; it is tried again at the next start'),
    );
  }
  const limiter = createCallerLimiter(
    createRateLimiter(redis, keys, { limit: config.rateLimitPerMinute, windowSeconds: 60 }),
    createRateLimiter(redis, keys, { limit: config.rateLimitPerAccountPerMinute, windowSeconds: 60 }),
  );
  const events = createEventStream(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const app = createGatewayApp({
    tracing,
    ncaId: config.ncaId,
    healthTimeoutMs: Math.min(1000, config.redisCommandTimeoutMs),
    maxOpenRequestsPerCredential: config.maxOpenRequestsPerCredential,
    forwardHeaders: config.forwardHeaders,
    auth,
    keyStore,
    apiKeyQuotaCount: config.apiKeyQuotaCount,
    streaming: {
      events,
      completions,
      store,
      resumeGraceMs: config.streamResumeGraceMs,
      onDelivered: invocations.reportDelivered,
    },
    results,
    assets,
    keys,
    metrics,
    access,
    resolver: functions,
    authorizations: createAuthorizationService({
      access,
      store: authorizationStore,
      onChange: (fid) => {
        functions.invalidate(fid);
        // Workers serve a repository model to the accounts its function is shared with: they re-check at once.
        registry.notifyChanged().catch((err: unknown) => log.warn({ err }, 'announcing a sharing change failed'));
      },
    }),
    functions: createFunctionService(registry, {
      onChange: (fid) => functions.invalidate(fid),
      access,
      authorizations: authorizationStore,
      assets,
      objects,
      maxModelBytes: config.assetMaxBytes,
      archiveLimits: { maxBytes: config.modelArchiveMaxBytes, maxRatio: config.modelArchiveMaxRatio },
      secrets: secretStore,
      quota: {
        functionsPerAccount: config.functionQuotaCount,
        versionsPerFunction: config.functionVersionQuotaCount,
      },
      retireQueue: (versionId) =>
        producer.retire(versionId, async (requestId) => {
          const gone = `function version '${versionId}' was deleted before this request ran`;
          const body = problem(404, gone, { source: 'nvcf-gateway', requestId });
          await store.complete(requestId, {
            status: 404,
            code: 'NOT_FOUND',
            contentType: PROBLEM_CONTENT_TYPE,
            body: Buffer.from(JSON.stringify(body)),
          });
        }),
    }),
    producer,
    store,
    limiter,
    logger: log,
    redis,
    registry,
    invocations,
    cancellation: createRequestCancellation({ store, producer, events }),
    maxBodyBytes: config.maxRequestBodyBytes,
    defaultPollSeconds: config.defaultPollSeconds,
    console: config.console,
  });

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve(
      {
        fetch: app.fetch,
        port: config.port,
        hostname: config.host,
        // Receiving a request (headers and body) is bounded: a client trickling a byte every few seconds
        // gets a 408 instead of holding a socket forever. The bound ends once the request is in, so a
        // long-poll's answer (up to an hour) is not cut. Checked every second, not Node's 30 s.
        serverOptions: {
          requestTimeout: config.bodyTimeoutMs,
          headersTimeout: Math.min(60_000, config.bodyTimeoutMs),
          connectionsCheckingInterval: 1000,
        },
      },
      () => resolve(s),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  log.info({ port }, 'gateway listening');
  const grpc =
    config.grpcPort >= 0
      ? await startGatewayGrpcServer(
          { auth, functions, invocations, limiter, logger: log, tracing },
          {
            host: config.host,
            port: config.grpcPort,
            defaultTimeoutSeconds: config.defaultPollSeconds,
            maxBodyBytes: config.maxRequestBodyBytes,
            maxElements: config.maxTensorElements,
            observers: [grpcMetricsInterceptor(metrics)],
          },
        )
      : undefined;
  if (grpc) log.info({ port: grpc.port }, 'gateway gRPC listening');
  const metricsServer =
    config.metricsPort >= 0
      ? await startMetricsServer(metrics.registry, { host: config.host, port: config.metricsPort })
      : undefined;
  if (metricsServer) log.info({ port: metricsServer.port }, 'gateway metrics listening');

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    grpcPort: grpc?.port ?? 0,
    metricsPort: metricsServer?.port ?? 0,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };

  async function shutdown(): Promise<void> {
    // gRPC first: new calls are refused at once; waiting ones end when the completion waiter closes.
    assetSweeper.stop();
    clearInterval(resultSweeper);
    const grpcClosed = grpc?.close();
    const metricsClosed = metricsServer?.close();
    // New connections are refused at once; open event streams get `shutdownGraceMs` to finish.
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    // Waiting long-polls end now with a 202 the client can follow up on any replica; streams go on.
    completions.endWaits();
    const graceOver = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), config.shutdownGraceMs).unref());
    if ((await Promise.race([drained, graceOver])) === 'timeout') {
      log.warn({ graceMs: config.shutdownGraceMs }, 'open streams outlived the shutdown grace; closing them');
      await completions.close();
      if ('closeAllConnections' in server) server.closeAllConnections();
      await drained;
    }
    await completions.close();
    await grpcClosed;
    await metricsClosed;
    await producer.close();
    // The spans of the last calls go out before the process ends.
    await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'flushing traces failed'));
    redis.disconnect();
    subscriber.disconnect();
  }
}
