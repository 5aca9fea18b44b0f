import type { FunctionVersion } from '@nvcf/control-store';
import { AppError, DeploymentRequest, parseControlRequest } from '@nvcf/protocol';
import type { Keys } from '@nvcf/queue';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import type { FunctionAccess } from '../control/function-access.ts';
import type { FunctionService } from '../control/function-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, VERSION_ID } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import {
  DeploymentResponse,
  deploymentDto,
  FunctionResponse,
  functionDto,
  GpuSpecificationDto,
} from './function-dto.ts';

const PATH = '/v2/nvcf/deployments/functions/:functionId/versions/:versionId';

/** The body POST and PUT parse (`DeploymentRequest`), documented with its specifications as a component. */
const FunctionDeploymentRequest = DeploymentRequest.extend({
  deploymentSpecifications: z.array(GpuSpecificationDto).min(1),
}).meta({ id: 'FunctionDeploymentRequest' });

const SCOPES = ['deploy_function'] as const;
const deploySpec = (update: boolean): OperationSpec => ({
  tag: 'Function Deployment',
  operationId: update ? 'updateFunctionDeployment' : 'createFunctionDeployment',
  summary: update ? 'Change a deployment' : 'Deploy a function version',
  description: update
    ? 'Replaces the deployment specifications; `gpu` and `backend` cannot change.'
    : 'Workers holding the version’s model start serving it at once. `minInstances: 0` keeps it invocable ' +
      'without a live worker (requests wait in its queue).',
  scopes: SCOPES,
  parameters: [FUNCTION_ID, VERSION_ID],
  requestBody: { required: true, content: jsonContent(FunctionDeploymentRequest) },
  responses: { 200: jsonResponse('The deployment.', DeploymentResponse) },
  problems: {
    400: `${Reason.badJson} ${
      update ? '`gpu` or `backend` changed.' : 'The version is already deployed (use PUT).'
    } ${Reason.notUuid}`,
    403: Reason.notOwner,
    404: `${update ? 'Unknown function or version, or a version that is not deployed.' : 'Unknown function or version.'} ${Reason.notVisible}`,
    413: Reason.controlTooLarge,
  },
});
const ID_PROBLEMS = {
  400: Reason.notUuid,
  403: Reason.notOwner,
  404: `Unknown function or version. ${Reason.notVisible}`,
};

/**
 * `POST|GET|PUT|DELETE /v2/nvcf/deployments/functions/{fid}/versions/{vid}` (NVCF API reference:
 * function deployment), for the function's owner account only.
 */
export function deploymentRoutes(
  functions: FunctionService,
  access: FunctionAccess,
  auth: Authenticator,
  keys: Keys,
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const deployer = requireAuth(auth, ...SCOPES);
  const ids = async (c: Context<AuthEnv>) => {
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    const versionId = uuidParam('versionId', c.req.param('versionId') ?? '');
    await access.requireOwner(c.get('principal').ncaId, functionId, versionId);
    return { functionId, versionId };
  };
  const dto = async (fv: FunctionVersion) => {
    const live = await functions.liveWorkers(fv.versionId);
    return { deployment: deploymentDto(fv, live, keys.queue(fv.versionId).stream) };
  };
  const deploy = (update: boolean) => async (c: Context<AuthEnv>) => {
    const { functionId, versionId } = await ids(c);
    const req = parseControlRequest(DeploymentRequest, await readJsonBody(c.req.raw));
    return c.json(await dto(await functions.deploy(functionId, versionId, req, { update })));
  };

  app.post(PATH, describeOperation(deploySpec(false)), deployer, deploy(false));
  app.put(PATH, describeOperation(deploySpec(true)), deployer, deploy(true));
  app.get(
    PATH,
    describeOperation({
      tag: 'Function Deployment',
      operationId: 'getFunctionDeployment',
      summary: 'Get a deployment',
      scopes: SCOPES,
      parameters: [FUNCTION_ID, VERSION_ID],
      responses: {
        200: jsonResponse('The deployment (no specifications while the version is not deployed).', DeploymentResponse),
      },
      problems: ID_PROBLEMS,
    }),
    deployer,
    async (c) => {
      const { functionId, versionId } = await ids(c);
      return c.json(await dto(await functions.get(functionId, versionId)));
    },
  );
  // Workers finish the version's in-flight requests before they stop consuming it (graceful either way).
  app.delete(
    PATH,
    describeOperation({
      tag: 'Function Deployment',
      operationId: 'deleteFunctionDeployment',
      summary: 'Undeploy a function version',
      description:
        'Workers finish the version’s in-flight requests, then stop serving it; its status becomes INACTIVE.',
      scopes: SCOPES,
      parameters: [
        FUNCTION_ID,
        VERSION_ID,
        {
          in: 'query',
          name: 'graceful',
          required: false,
          description:
            'NVCF’s graceful shutdown. Accepted either way: an undeploy here is always graceful (in-flight requests ' +
            'finish; waiting ones are answered by the next deployment or expire).',
          schema: { type: 'boolean', default: false },
        },
      ],
      responses: { 200: jsonResponse('The undeployed version.', FunctionResponse) },
      problems: { ...ID_PROBLEMS, 400: `${ID_PROBLEMS[400]} Or \`graceful\` is not \`true\` or \`false\`.` },
    }),
    deployer,
    async (c) => {
      const { functionId, versionId } = await ids(c);
      const graceful = c.req.query('graceful');
      if (graceful !== undefined && graceful !== 'true' && graceful !== 'false') {
        throw new AppError('INVALID_ARGUMENT', "Invalid request: 'graceful' must be true or false");
      }
      const fv = await functions.undeploy(functionId, versionId);
      return c.json({ function: functionDto(fv, []) });
    },
  );
  return app;
}
