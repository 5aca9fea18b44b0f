import { parseControlRequest, UpdateSecretsRequest } from '@nvcf/protocol';
import { Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import type { FunctionAccess } from '../control/function-access.ts';
import type { FunctionService } from '../control/function-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, VERSION_ID } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** The body, under NVCF's component name. */
const UpdateSecretsBody = UpdateSecretsRequest.meta({ id: 'UpdateSecretsRequest' });

/**
 * User secret management (NVCF API reference: updateSecrets): a version's secrets are replaced as a whole. They
 * are never read back: a function's DTO names them, and only its server sees their values.
 */
export function secretRoutes(functions: FunctionService, access: FunctionAccess, auth: Authenticator): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.put(
    '/v2/nvcf/secrets/functions/:functionId/versions/:versionId',
    describeOperation({
      tag: 'User Secret Management',
      operationId: 'updateSecrets',
      summary: 'Update user secrets for a function version',
      description:
        'Replaces the version’s secrets with `secrets` (an empty list removes them). They are encrypted at rest ' +
        'and never returned; a container function’s server gets them as environment variables (process mode: the ' +
        'server is restarted with them) or as `secrets.json` in a sidecar’s shared directory. Needs ' +
        '`NVCF_SECRETS_KEY` on the gateway and its workers.',
      scopes: ['update_secrets'],
      parameters: [FUNCTION_ID, VERSION_ID],
      requestBody: { required: true, content: jsonContent(UpdateSecretsBody) },
      responses: { 200: { description: 'OK: the secrets are replaced (empty body).' } },
      problems: {
        400:
          `${Reason.badJson} ${Reason.notUuid} Or: a name given twice; secrets for a model function (only a ` +
          'container function’s server receives them); or no `NVCF_SECRETS_KEY` is configured.',
        403: `${Reason.functionNotAllowed} Or the function is another account’s, shared with the caller's: only its owner sets its secrets.`,
        404: 'Unknown function or version (or another account’s, not shared with the caller’s).',
        413: Reason.controlTooLarge,
      },
    }),
    requireAuth(auth, 'update_secrets'),
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      requireFunction(c.get('principal'), functionId);
      const versionId = uuidParam('versionId', c.req.param('versionId'));
      await access.requireOwner(c.get('principal').ncaId, functionId, versionId);
      const { secrets } = parseControlRequest(UpdateSecretsBody, await readJsonBody(c.req.raw));
      await functions.updateSecrets(functionId, versionId, secrets);
      return c.body(null, 200);
    },
  );
  return app;
}
