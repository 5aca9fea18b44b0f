import { Hono } from 'hono';
import type { Redis } from 'ioredis';
import { problemResponse } from '../http/problem-response.ts';

/** `GET /health` (no auth): healthy when Redis, where all request state lives, answers. */
export function healthRoutes(redis: Redis): Hono {
  const app = new Hono();
  app.get('/health', async (c) => {
    try {
      await redis.ping();
      return c.json({ status: 'ok' });
    } catch {
      return problemResponse(503, 'Redis is unreachable', { instance: '/health' });
    }
  });
  return app;
}
