import { CreateFunctionRequest, parseControlRequest, UpdateMetadataRequest } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion } from '@nvcf/queue';
import { Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { mayAccessFunction, requireFunction } from '../auth/principal.ts';
import type { FunctionService } from '../control/function-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { functionDto } from './function-dto.ts';

/** Function registration and lookup (NVCF API reference: function management): one DTO per version. */
export function functionRoutes(
  registry: FunctionRegistry,
  functions: FunctionService,
  auth: Authenticator,
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const lister = requireAuth(auth, 'list_functions', 'list_functions_details');
  const withLive = async (fvs: FunctionVersion[]) => {
    const live = await registry.liveWorkers(fvs.map((fv) => fv.versionId));
    return fvs.map((fv, i) => functionDto(fv, live[i] ?? []));
  };

  app.get('/v2/nvcf/functions', lister, async (c) => {
    const principal = c.get('principal');
    // A key restricted to some functions sees only those.
    const all = (await registry.list()).filter((fv) => mayAccessFunction(principal, fv.id));
    return c.json({ functions: await withLive(all) });
  });
  app.get('/v2/nvcf/functions/ids', lister, async (c) => {
    const principal = c.get('principal');
    const ids = new Set((await registry.list()).map((fv) => fv.id).filter((id) => mayAccessFunction(principal, id)));
    return c.json({ functionIds: [...ids] });
  });
  app.get('/v2/nvcf/functions/:functionId/versions', lister, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    return c.json({ functions: await withLive(await functions.versions(functionId)) });
  });
  app.get('/v2/nvcf/functions/:functionId/versions/:versionId', lister, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    const fv = await functions.get(functionId, uuidParam('versionId', c.req.param('versionId')));
    return c.json({ function: (await withLive([fv]))[0] });
  });

  const register = requireAuth(auth, 'register_function');
  app.post('/v2/nvcf/functions', register, async (c) => {
    const req = parseControlRequest(CreateFunctionRequest, await readJsonBody(c.req.raw));
    const fv = await functions.create(req, { ownerSubject: c.get('principal').subject });
    return c.json({ function: functionDto(fv, []) });
  });
  app.post('/v2/nvcf/functions/:functionId/versions', register, async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    const req = parseControlRequest(CreateFunctionRequest, await readJsonBody(c.req.raw));
    const fv = await functions.create(req, { functionId, ownerSubject: c.get('principal').subject });
    return c.json({ function: functionDto(fv, []) });
  });

  app.put(
    '/v2/nvcf/metadata/functions/:functionId/versions/:versionId',
    requireAuth(auth, 'update_function'),
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      requireFunction(c.get('principal'), functionId);
      const change = parseControlRequest(UpdateMetadataRequest, await readJsonBody(c.req.raw));
      const fv = await functions.updateMetadata(functionId, uuidParam('versionId', c.req.param('versionId')), change);
      return c.json({ function: (await withLive([fv]))[0] });
    },
  );
  app.delete('/v2/nvcf/functions/:functionId/versions/:versionId', requireAuth(auth, 'delete_function'), async (c) => {
    const functionId = uuidParam('functionId', c.req.param('functionId'));
    requireFunction(c.get('principal'), functionId);
    await functions.remove(functionId, uuidParam('versionId', c.req.param('versionId')));
    return c.body(null, 204);
  });
  return app;
}
