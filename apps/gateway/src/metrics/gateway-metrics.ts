import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Labels of everything per function version: bounded by the deployed functions, never per request or key. */
export const VERSION_LABELS = ['function_id', 'function_version_id'] as const;

/**
 * Seconds from 5 ms to an hour (the longest a request may wait for a worker under the default TTLs),
 * so a queue backing up still lands in a bucket rather than in `+Inf`.
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

/**
 * The gateway's Prometheus metrics, in a registry of their own (never prom-client's global one: tests run
 * several gateways in one process). Names and units follow Prometheus' conventions
 * (https://prometheus.io/docs/practices/naming/): a `nvcf_` namespace, base units, `_total` on counters.
 */
export function createGatewayMetrics() {
  const registry = new Registry();
  // Process CPU, memory, event-loop lag: the same names every Node exporter has (process_*, nodejs_*).
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpResponses: new Counter({
      name: 'nvcf_gateway_http_responses_total',
      help: 'HTTP responses by method, route (the matched pattern) and status code: 200/202/302, 401/403/429 and the rest.',
      labelNames: ['method', 'route', 'code'] as const,
      registers,
    }),
    grpcResponses: new Counter({
      name: 'nvcf_gateway_grpc_responses_total',
      help: 'gRPC calls by method and final status code (OK; UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED for refusals).',
      labelNames: ['method', 'code'] as const,
      registers,
    }),
    openRequests: new Gauge({
      name: 'nvcf_gateway_open_requests',
      help: 'Invocation calls open on this gateway now: long-polls waiting for an answer and event streams (SSE).',
      labelNames: ['kind'] as const,
      registers,
    }),
    accepted: new Counter({
      name: 'nvcf_gateway_invocations_accepted_total',
      help: 'Invocations this gateway queued.',
      labelNames: VERSION_LABELS,
      registers,
    }),
    finished: new Counter({
      name: 'nvcf_gateway_invocations_total',
      help: 'Invocations whose final answer this gateway handed to the client, by the answer’s HTTP status.',
      labelNames: [...VERSION_LABELS, 'status'] as const,
      registers,
    }),
    latency: new Histogram({
      name: 'nvcf_gateway_invocation_duration_seconds',
      help: 'From the gateway accepting an invocation to its result being ready (the completion reaching the gateway).',
      labelNames: VERSION_LABELS,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
  };
}
