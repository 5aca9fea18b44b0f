import { Hono } from 'hono';
import type { InferenceCore } from '../core/core-types.ts';

/** 200 or 400, empty body: what Triton answers health and readiness probes with (Open Inference Protocol REST). */
export const probe = (ok: boolean) => new Response(null, { status: ok ? 200 : 400 });

/** `GET /v2` (server metadata), `/v2/health/live`, `/v2/health/ready`. */
export function serverRoutes(core: InferenceCore): Hono {
  const app = new Hono();
  app.get('/v2', (c) =>
    c.json({ name: core.serverName, version: core.serverVersion, extensions: [...core.extensions] }),
  );
  app.get('/v2/health/live', () => probe(core.isLive()));
  app.get('/v2/health/ready', () => probe(core.isReady()));
  return app;
}
