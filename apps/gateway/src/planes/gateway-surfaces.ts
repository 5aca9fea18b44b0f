import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type MetricsServer, startMetricsServer } from '@nvcf/service-kit';
import type { Hono } from 'hono';
import { createGatewayApp } from '../app.ts';
import type { GatewayConfig } from '../config.ts';
import { type GatewayGrpcServer, startGatewayGrpcServer } from '../grpc/index.ts';
import { grpcMetricsInterceptor } from '../metrics/grpc-metrics.ts';
import type { ControlPlane, ControlServices } from './control-plane.ts';
import type { GatewayInfrastructure } from './gateway-infrastructure.ts';
import type { InvocationPlane } from './invocation-plane.ts';

type HttpServer = ReturnType<typeof serve>;

/** The planes the surfaces serve. */
export interface SurfacePlanes {
  infra: GatewayInfrastructure;
  control: ControlPlane;
  services: ControlServices;
  invocation: InvocationPlane;
}

/** The gateway's listening sockets: the NVCF HTTP API, gRPC invocation and Prometheus metrics. */
export interface GatewaySurfaces {
  url: string;
  port: number;
  /** 0 when disabled. */
  grpcPort: number;
  /** 0 when disabled. */
  metricsPort: number;
  /** Refuses new connections and calls on every surface; what is open goes on (see StoppingSurfaces). */
  stopAccepting(): StoppingSurfaces;
}

export interface StoppingSurfaces {
  /** Whether every HTTP connection ended within `graceMs`. */
  drainedWithin(graceMs: number): Promise<boolean>;
  /** Cuts the HTTP connections still open, and resolves once they are gone. */
  cutOpenConnections(): Promise<void>;
  /** gRPC and metrics closed: gRPC's calls end once the completion waiter they wait on is closed. */
  closed(): Promise<void>;
}

export async function startGatewaySurfaces(planes: SurfacePlanes, config: GatewayConfig): Promise<GatewaySurfaces> {
  const { log, tracing, metrics } = planes.infra;
  const server = await listen(createHttpApp(planes, config), config);
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  log.info({ port }, 'gateway listening');
  const { invocations, limiter, resolver } = planes.invocation;
  const grpc =
    config.grpcPort >= 0
      ? await startGatewayGrpcServer(
          { auth: planes.control.auth, functions: resolver, invocations, limiter, logger: log, tracing },
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
  return {
    url: `http://${host}:${port}`,
    port,
    grpcPort: grpc?.port ?? 0,
    metricsPort: metricsServer?.port ?? 0,
    stopAccepting: () => stopAccepting(server, grpc, metricsServer),
  };
}

function stopAccepting(
  server: HttpServer,
  grpc: GatewayGrpcServer | undefined,
  metricsServer: MetricsServer | undefined,
): StoppingSurfaces {
  // gRPC first: new calls are refused at once; waiting ones end when the completion waiter closes.
  const grpcClosed = grpc?.close();
  const metricsClosed = metricsServer?.close();
  // New connections are refused at once; open event streams get the shutdown grace to finish.
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  if ('closeIdleConnections' in server) server.closeIdleConnections();
  return {
    async drainedWithin(graceMs) {
      const graceOver = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      return (await Promise.race([drained, graceOver])) !== 'timeout';
    },
    async cutOpenConnections() {
      if ('closeAllConnections' in server) server.closeAllConnections();
      await drained;
    },
    async closed() {
      await grpcClosed;
      await metricsClosed;
    },
  };
}

function listen(app: Hono, config: GatewayConfig): Promise<HttpServer> {
  return new Promise<HttpServer>((resolve) => {
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
}

function createHttpApp({ infra, control, services, invocation }: SurfacePlanes, config: GatewayConfig): Hono {
  const { completions, store, events, invocations } = invocation;
  return createGatewayApp({
    tracing: infra.tracing,
    healthTimeoutMs: Math.min(1000, config.redisCommandTimeoutMs),
    maxOpenRequestsPerCredential: config.maxOpenRequestsPerCredential,
    forwardHeaders: config.forwardHeaders,
    auth: control.auth,
    apiKeys: control.apiKeys,
    clusterGroups: control.clusterGroups,
    streaming: {
      events,
      completions,
      store,
      resumeGraceMs: config.streamResumeGraceMs,
      onDelivered: invocations.reportDelivered,
    },
    results: invocation.results,
    assets: control.assets,
    keys: infra.keys,
    metrics: infra.metrics,
    access: control.access,
    resolver: invocation.resolver,
    authorizations: services.authorizations,
    functions: services.functions,
    queues: invocation.queues,
    limiter: invocation.limiter,
    logger: infra.log,
    redis: infra.redis,
    invocations,
    cancellation: invocation.cancellation,
    maxBodyBytes: config.maxRequestBodyBytes,
    defaultPollSeconds: config.defaultPollSeconds,
    console: config.console,
  });
}
