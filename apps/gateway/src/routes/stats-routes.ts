import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import { describeOperation, jsonResponse, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, uuidString, VERSION_ID } from '../http/openapi-schemas.ts';
import type { QueueService } from '../invocation/queue-service.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';

const VersionStatsResponse = z
  .object({
    functionId: uuidString(),
    functionVersionId: uuidString(),
    queueDepth: z.number().int().min(0).describe('Waiting plus running requests of the version (all gateways).'),
    accepted: z.number().int().min(0).describe('Invocations this gateway queued since it started.'),
    finished: z
      .record(z.string(), z.number().int().min(0))
      .describe('Final answers this gateway handed out since it started, by HTTP status.'),
    latency: z
      .object({
        buckets: z.array(z.object({ le: z.number(), count: z.number().int().min(0) })),
        count: z.number().int().min(0),
        sumSeconds: z.number().min(0),
      })
      .describe('Seconds from accepting to the result being ready: cumulative buckets, as Prometheus keeps them.'),
  })
  .meta({ id: 'VersionStatsResponse' });

export interface StatsRouteDeps {
  /** Only the function's owner account reads its counters (and its queue's depth). */
  queues: Pick<QueueService, 'ownedVersionDepth'>;
  metrics: GatewayMetrics;
  auth: Authenticator;
}

/**
 * `GET /v2/nvcf/stats/functions/{fid}/versions/{vid}` (ours): the version's queue depth and this gateway's
 * cumulative invocation counters, read from the same Prometheus metrics the metrics port serves. The console
 * charts throughput, latency quantiles and errors from the differences between two reads; the metrics port
 * itself stays private (and on another origin).
 */
export function statsRoutes(deps: StatsRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const spec = describeOperation({
    tag: 'Queue Details',
    operationId: 'getVersionStats',
    summary: 'Queue depth and invocation counters of a function version (ours)',
    description:
      'Counters are this gateway’s since it started (several gateways: each its own share); the queue depth is ' +
      'the version’s. Rates and quantiles come from the difference between two reads.',
    scopes: ['queue_details'],
    parameters: [FUNCTION_ID, VERSION_ID],
    responses: { 200: jsonResponse('The version’s queue and counters.', VersionStatsResponse) },
    problems: {
      400: Reason.notUuid,
      403: Reason.notOwner,
      404: `Unknown function or version. ${Reason.notVisible}`,
    },
  });
  app.get(
    '/v2/nvcf/stats/functions/:functionId/versions/:versionId',
    spec,
    requireAuth(deps.auth, 'queue_details'),
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      const versionId = uuidParam('versionId', c.req.param('versionId'));
      requireFunction(c.get('principal'), functionId);
      const queueDepth = await deps.queues.ownedVersionDepth(c.get('principal').ncaId, functionId, versionId);
      const counters = await versionCounters(deps.metrics, functionId, versionId);
      return c.json({
        functionId,
        functionVersionId: versionId,
        queueDepth,
        ...counters,
      });
    },
  );
  return app;
}

/** This gateway's counters of one version, out of its prom-client metrics. */
async function versionCounters(metrics: GatewayMetrics, functionId: string, versionId: string) {
  const mine = (labels: Partial<Record<string, string | number>>) =>
    labels.function_id === functionId && labels.function_version_id === versionId;
  const [accepted, finished, latency] = await Promise.all([
    metrics.accepted.get(),
    metrics.finished.get(),
    metrics.latency.get(),
  ]);
  const byStatus: Record<string, number> = {};
  for (const v of finished.values) if (mine(v.labels)) byStatus[String(v.labels.status)] = v.value;
  const own = latency.values.filter((v) => mine(v.labels));
  // prom-client adds `le` to the bucket values' labels beyond the declared ones.
  const le = (v: { labels: object }) => String(Reflect.get(v.labels, 'le'));
  const buckets = own
    .filter((v) => v.metricName?.endsWith('_bucket') && le(v) !== '+Inf')
    .map((v) => ({ le: Number(le(v)), count: v.value }));
  return {
    accepted: accepted.values.find((v) => mine(v.labels))?.value ?? 0,
    finished: byStatus,
    latency: {
      buckets,
      count: own.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0,
      sumSeconds: own.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0,
    },
  };
}
