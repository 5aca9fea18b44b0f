import { functionStatus } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion } from '@nvcf/queue';
import { Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { mayAccessFunction } from '../auth/principal.ts';

/** FunctionDto (nvcf-api.md §2.2) for one version, with its live workers as active instances. */
export function functionDto(fv: FunctionVersion, workerIds: string[]) {
  return {
    id: fv.id,
    ncaId: fv.ncaId,
    versionId: fv.versionId,
    name: fv.name,
    status: functionStatus(fv.deployment, workerIds.length),
    inferenceUrl: fv.inferenceUrl,
    ownedByDifferentAccount: false,
    containerEnvironment: [],
    models: fv.models,
    apiBodyFormat: fv.apiBodyFormat,
    functionType: fv.functionType,
    createdAt: fv.createdAt,
    description: fv.description,
    tags: [],
    activeInstances: workerIds.map((instanceId) => ({
      instanceId,
      functionId: fv.id,
      functionVersionId: fv.versionId,
      instanceStatus: 'ACTIVE',
      ncaId: fv.ncaId,
    })),
    // Not in NVCF's DTO: what a caller needs to build a KServe V2 request body for this function.
    model: fv.model,
  };
}

/** `GET /v2/nvcf/functions`: one entry per version, so a user can find what to invoke. */
export function functionRoutes(registry: FunctionRegistry, auth: Authenticator): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const lister = requireAuth(auth, 'list_functions', 'list_functions_details');
  app.get('/v2/nvcf/functions', lister, async (c) => {
    const principal = c.get('principal');
    // A key restricted to some functions sees only those.
    const all = (await registry.list()).filter((fv) => mayAccessFunction(principal, fv.id));
    const live = await registry.liveWorkers(all.map((fv) => fv.versionId));
    return c.json({ functions: all.map((fv, i) => functionDto(fv, live[i] ?? [])) });
  });
  return app;
}
