import { DeploymentRequest, parseControlRequest } from '@nvcf/protocol';
import type { FunctionRegistry, FunctionVersion, Keys } from '@nvcf/queue';
import { type Context, Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import type { FunctionService } from '../control/function-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { deploymentDto, functionDto } from './function-dto.ts';

const PATH = '/v2/nvcf/deployments/functions/:functionId/versions/:versionId';

/**
 * `POST|GET|PUT|DELETE /v2/nvcf/deployments/functions/{fid}/versions/{vid}` (NVCF API reference:
 * function deployment).
 */
export function deploymentRoutes(
  registry: FunctionRegistry,
  functions: FunctionService,
  auth: Authenticator,
  keys: Keys,
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const deployer = requireAuth(auth, 'deploy_function');
  const ids = (c: Context<AuthEnv>) => {
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    return { functionId, versionId: uuidParam('versionId', c.req.param('versionId') ?? '') };
  };
  const dto = async (fv: FunctionVersion) => {
    const [live] = await registry.liveWorkers([fv.versionId]);
    return { deployment: deploymentDto(fv, live ?? [], keys.queueName(fv.versionId)) };
  };
  const deploy = (update: boolean) => async (c: Context<AuthEnv>) => {
    const { functionId, versionId } = ids(c);
    const req = parseControlRequest(DeploymentRequest, await readJsonBody(c.req.raw));
    return c.json(await dto(await functions.deploy(functionId, versionId, req, { update })));
  };

  app.post(PATH, deployer, deploy(false));
  app.put(PATH, deployer, deploy(true));
  app.get(PATH, deployer, async (c) => {
    const { functionId, versionId } = ids(c);
    return c.json(await dto(await functions.get(functionId, versionId)));
  });
  // Workers finish the version's in-flight requests before they stop consuming it (graceful either way).
  app.delete(PATH, deployer, async (c) => {
    const { functionId, versionId } = ids(c);
    const fv = await functions.undeploy(functionId, versionId);
    return c.json({ function: functionDto(fv, []) });
  });
  return app;
}
