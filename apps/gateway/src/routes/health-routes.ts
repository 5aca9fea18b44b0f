import type { RedisClient } from '@nvcf/queue';
import { Hono } from 'hono';
import { z } from 'zod';
import { describeOperation, jsonResponse } from '../http/openapi-operation.ts';
import { problemResponse } from '../http/problem-response.ts';

const HealthComponent = z.object({ status: z.literal('ok') }).meta({ id: 'HealthComponent' });

/**
 * `GET /health` (no auth): healthy when Redis, where all request state lives, answers PING within
 * `timeoutMs`. A stalled Redis must not stall the probe: orchestrators time probes out and would read a
 * hang as a dead gateway rather than an unhealthy dependency.
 */
export function healthRoutes(redis: RedisClient, timeoutMs: number): Hono {
  const app = new Hono();
  const health = describeOperation({
    tag: 'Health',
    operationId: 'getHealth',
    summary: 'Health',
    description: `Healthy while Redis, where all request state lives, answers within ${timeoutMs} ms.`,
    responses: { 200: jsonResponse('Healthy.', HealthComponent) },
    problems: { 503: 'Redis is unreachable or did not answer in time.' },
  });
  app.get('/health', health, async (c) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), timeoutMs);
    });
    try {
      const answer = await Promise.race([redis.ping(), late]);
      if (answer === 'PONG') return c.json({ status: 'ok' });
    } catch {
      // unreachable: the 503 below
    } finally {
      clearTimeout(timer);
    }
    return problemResponse(503, 'Redis is unreachable', { instance: '/health', headers: { 'retry-after': '1' } });
  });
  return app;
}
