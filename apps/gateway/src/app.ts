import type { Keys, RedisClient } from '@nvcf/queue';
import { accessLog, type Logger, type Tracing, tracingOff } from '@nvcf/service-kit';
import { Hono } from 'hono';
import { every } from 'hono/combine';
import { type AssetService, assetRoutes } from './assets/index.ts';
import type { Authenticator } from './auth/authenticator.ts';
import type { CallerLimiter } from './auth/caller-limiter.ts';
import { consoleRoutes } from './console/console-routes.ts';
import type { AuthorizationService } from './control/authorization-service.ts';
import type { ClusterGroupService } from './control/cluster-group-service.ts';
import type { FunctionAccess } from './control/function-access.ts';
import type { FunctionService } from './control/function-service.ts';
import type { KeyService } from './control/key-service.ts';
import { corsHeaders } from './http/cors-headers.ts';
import type { EventStreamDeps } from './http/event-stream-response.ts';
import { openWaitLimit } from './http/open-waits.ts';
import { openApiRoutes } from './http/openapi-routes.ts';
import { errorToProblem, problemResponse } from './http/problem-response.ts';
import { rateLimit } from './http/rate-limit.ts';
import { traceSpan } from './http/trace-span.ts';
import type { FunctionResolver } from './invocation/function-resolver.ts';
import type { InvocationService } from './invocation/invocation-service.ts';
import type { QueueService } from './invocation/queue-service.ts';
import { createRequestAccessCheck } from './invocation/request-access.ts';
import type { RequestCancellation } from './invocation/request-cancellation.ts';
import type { GatewayMetrics } from './metrics/gateway-metrics.ts';
import { httpMetrics, openRequestsGauge } from './metrics/http-metrics.ts';
import type { ResultLinks } from './results/result-links.ts';
import { authorizationRoutes } from './routes/authorization-routes.ts';
import { clusterGroupRoutes } from './routes/cluster-group-routes.ts';
import { deploymentRoutes } from './routes/deployment-routes.ts';
import { execRoutes } from './routes/exec-routes.ts';
import { functionRoutes } from './routes/function-routes.ts';
import { healthRoutes } from './routes/health-routes.ts';
import { keyRoutes } from './routes/key-routes.ts';
import { pexecRoutes } from './routes/pexec-routes.ts';
import { queueRoutes } from './routes/queue-routes.ts';
import { secretRoutes } from './routes/secret-routes.ts';
import { statsRoutes } from './routes/stats-routes.ts';

export interface GatewayAppDeps {
  logger: Logger;
  redis: RedisClient;
  functions: FunctionService;
  /** Which account sees and manages which function (the control plane's reads). */
  access: FunctionAccess;
  /** Sharing functions with other accounts. */
  authorizations: AuthorizationService;
  /** The invocation path's cached view of functions: who may still read a request. */
  resolver: Pick<FunctionResolver, 'mayUse'>;
  keys: Keys;
  /** Queue depths and positions (`/v2/nvcf/queues`, `/v2/nvcf/stats`). */
  queues: QueueService;
  /** The worker pools as NVCF's cluster groups. */
  clusterGroups: ClusterGroupService;
  limiter: CallerLimiter;
  invocations: InvocationService;
  cancellation: RequestCancellation;
  auth: Authenticator;
  /** API keys, managed over HTTP (`/v2/nvcf/keys`). */
  apiKeys: KeyService;
  assets: AssetService;
  results: ResultLinks;
  streaming: EventStreamDeps;
  maxBodyBytes: number;
  defaultPollSeconds: number;
  /** `/health` answers within this long whether Redis does or not. */
  healthTimeoutMs: number;
  /** Client headers passed to functions besides the defaults. */
  forwardHeaders: readonly string[];
  /** Open long-polls and event streams per credential before 429 (0: unlimited). */
  maxOpenRequestsPerCredential: number;
  /** Prometheus metrics: responses by route and status, open long-polls and streams. */
  metrics: GatewayMetrics;
  /** Serve the web console at `/console` (static files; it calls the routes above with the user's key). */
  console?: boolean;
  /** OpenTelemetry: a server span per call (off: no span, no cost). */
  tracing?: Tracing;
}

/** The gateway's HTTP surface. Pure wiring: every route parses, calls a service, maps the result. */
export function createGatewayApp(deps: GatewayAppDeps): Hono {
  const app = new Hono();
  app.use(accessLog(deps.logger));
  app.use(httpMetrics(deps.metrics));
  // The NVCF API only: health checks and probes would fill traces with nothing to follow.
  app.use('/v2/nvcf/*', traceSpan(deps.tracing ?? tracingOff));
  app.use(
    corsHeaders({ exposeHeaders: ['nvcf-reqid', 'nvcf-status', 'nvcf-percent-complete', 'location'], maxAge: 86400 }),
  );
  app.route('/', healthRoutes(deps.redis, deps.healthTimeoutMs));
  app.route('/', functionRoutes(deps.functions, deps.access, deps.auth));
  app.route('/', deploymentRoutes(deps.functions, deps.access, deps.auth, deps.keys));
  app.route('/', authorizationRoutes(deps.authorizations, deps.auth));
  app.route('/', secretRoutes(deps.functions, deps.access, deps.auth));
  const requestAccess = createRequestAccessCheck(deps.resolver);
  const limit = rateLimit(deps.limiter);
  const waits = every(openWaitLimit(deps.maxOpenRequestsPerCredential), openRequestsGauge(deps.metrics));
  const resultUrl = (id: string, origin: string) => deps.results.url(id, origin);
  app.route('/', pexecRoutes(deps.invocations, deps.auth, { ...deps, limit, waits, resultUrl, requestAccess }));
  app.route(
    '/',
    execRoutes(deps.invocations, deps.auth, {
      maxBodyBytes: deps.maxBodyBytes,
      limit,
      waits,
      resultUrl,
      assets: deps.assets,
      requestAccess,
    }),
  );
  app.route('/', deps.results.routes());
  app.route('/', queueRoutes(deps));
  app.route('/', clusterGroupRoutes(deps));
  app.route('/', assetRoutes(deps));
  app.route('/', keyRoutes(deps));
  app.route('/', statsRoutes(deps));
  if (deps.console) app.route('/', consoleRoutes());
  // No credential: the document describes every route above (those with a `describeRoute`).
  app.route('/', openApiRoutes(app));
  app.notFound((c) => problemResponse(404, `No route for ${c.req.method} ${c.req.path}`, { instance: c.req.path }));
  app.onError((err, c) => {
    const { response, internal } = errorToProblem(err, c.req.path);
    if (internal) deps.logger.error({ err, path: c.req.path }, 'unhandled error');
    return response;
  });
  return app;
}
