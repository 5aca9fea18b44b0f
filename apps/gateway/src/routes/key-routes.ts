import { isPrintableText, NcaId, NON_PRINTABLE_MESSAGE, parseControlRequest, SCOPES } from '@nvcf/protocol';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ApiKey, KeyService } from '../control/key-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, Reason } from '../http/openapi-operation.ts';
import { timestamp, uuidPath, uuidString } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

export interface KeyRouteDeps {
  apiKeys: KeyService;
  auth: Authenticator;
}

const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

const known = SCOPES.join(', ');

/** The body of `POST /v2/nvcf/keys`. Strict: a misspelt `functionIds` must not quietly mint an unrestricted key. */
const CreateKeyRequest = z
  .strictObject(
    {
      name: z
        .string({ error: required('a string') })
        .min(1, 'must not be empty')
        .refine(isPrintableText, NON_PRINTABLE_MESSAGE)
        .max(128, 'must be at most 128 characters'),
      scopes: z
        .array(z.enum(SCOPES, { error: (i) => `has an unknown scope ${JSON.stringify(i.input)} (known: ${known})` }), {
          error: required('an array of scope names'),
        })
        .min(1, 'must name at least one scope'),
      functionIds: z
        .array(z.guid({ error: 'must be function ids (UUIDs)' }), { error: 'must be an array of function ids' })
        // An empty list would be a key for no function at all, and easy to mistake for "every function".
        .min(1, 'must not be empty (leave it out for every function)')
        .max(1000, 'must name at most 1000 functions')
        .optional(),
      ncaId: NcaId.optional().describe(
        'The account the key belongs to; absent: the caller’s. Another account’s only for an operator (every NVCF ' +
          'scope, every function, in the gateway’s own account): that is how an account is made.',
      ),
    },
    {
      error: (i) =>
        i.code === 'unrecognized_keys'
          ? `unknown field(s): ${i.keys.map((k) => `'${k}'`).join(', ')}`
          : 'the body must be a JSON object {"name", "scopes", "functionIds"?, "ncaId"?}',
    },
  )
  .meta({ id: 'CreateApiKeyRequest' });

/** A key as the API shows it: never its secret (only its hash is stored). */
const ApiKeyDto = z
  .object({
    id: uuidString(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    functionIds: z.array(uuidString()).optional().describe('The functions it may use; absent: every function.'),
    ncaId: z.string().describe('The account (NVIDIA Cloud Account id) it belongs to.'),
    createdAt: timestamp(),
    revokedAt: timestamp().optional(),
  })
  .meta({ id: 'ApiKeyDto' });
type ApiKeyDto = z.infer<typeof ApiKeyDto>;
const ListApiKeysResponse = z.object({ keys: z.array(ApiKeyDto) }).meta({ id: 'ListApiKeysResponse' });
const CreateApiKeyResponse = z
  .object({ key: ApiKeyDto, value: z.string().describe('The secret (`nvapi-…`): shown this once, never again.') })
  .meta({ id: 'CreateApiKeyResponse' });

const tag = 'API Keys';
const MANAGE = ['manage_keys'] as const;
const listKeys = describeOperation({
  tag,
  operationId: 'listApiKeys',
  summary: 'List API keys',
  description:
    'Oldest first, revoked keys included: the keys of the caller’s account it could have created, and itself (an ' +
    'operator: of every account).',
  scopes: MANAGE,
  responses: { 200: jsonResponse('The keys (never their secrets).', ListApiKeysResponse) },
});
const createKey = describeOperation({
  tag,
  operationId: 'createApiKey',
  summary: 'Create an API key',
  description:
    'With scopes the caller holds, and (when the caller is restricted to some functions) a subset of its functions, ' +
    'in the caller’s account, or with `ncaId` (an operator only) another. The secret is in the answer only ' +
    '(`Cache-Control: no-store`).',
  scopes: MANAGE,
  requestBody: { required: true, content: jsonContent(CreateKeyRequest) },
  responses: { 201: jsonResponse('The key and its secret.', CreateApiKeyResponse) },
  problems: {
    400: `${Reason.badJson} Unknown fields are refused.`,
    403: 'The key would hold a scope or a function the caller does not, or belong to another account (not an operator); or its account holds `API_KEY_QUOTA_COUNT` live keys already (an operator minting for an account counts against that account).',
    413: Reason.controlTooLarge,
  },
});
const revokeKey = describeOperation({
  tag,
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  description: 'Takes effect on every gateway within its AUTH_CACHE_MS. Revoking twice keeps the first `revokedAt`.',
  scopes: MANAGE,
  parameters: [uuidPath('keyId', 'The key id.')],
  responses: { 204: { description: 'Revoked.' } },
  problems: {
    400: Reason.notUuid,
    403: 'The key holds more than the caller.',
    404: 'Unknown key, or another account’s (unless the caller is an operator).',
  },
});

const apiKeyDto = (k: ApiKey): ApiKeyDto => ({
  id: k.id,
  name: k.name,
  scopes: k.scopes,
  ...(k.functionIds ? { functionIds: k.functionIds } : {}),
  ncaId: k.ncaId,
  createdAt: k.createdAt,
  ...(k.revokedAt ? { revokedAt: k.revokedAt } : {}),
});

/**
 * `GET|POST /v2/nvcf/keys`, `DELETE /v2/nvcf/keys/{keyId}` (scope `manage_keys`). A caller sees and
 * revokes the keys of its account it could have created (and itself), so a restricted manager cannot list or
 * revoke the admin key, and one account's admin cannot see another's keys. An operator (`isOperator`) sees every
 * account's keys and creates keys for other accounts (`ncaId`): that is how a second account comes to be. A
 * revocation reaches every gateway within its AUTH_CACHE_MS (each caches verified keys).
 */
export function keyRoutes(deps: KeyRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const manager = requireAuth(deps.auth, 'manage_keys');

  app.get('/v2/nvcf/keys', listKeys, manager, async (c) => {
    const keys = await deps.apiKeys.list(c.get('principal'));
    return c.json({ keys: keys.map(apiKeyDto) });
  });

  app.post('/v2/nvcf/keys', createKey, manager, async (c) => {
    const req = parseControlRequest(CreateKeyRequest, await readJsonBody(c.req.raw));
    const { key, secret } = await deps.apiKeys.create(c.get('principal'), req);
    // The only time the secret is shown: nothing on the way may keep a copy.
    c.header('cache-control', 'no-store');
    return c.json({ key: apiKeyDto(key), value: secret }, 201);
  });

  app.delete('/v2/nvcf/keys/:keyId', revokeKey, manager, async (c) => {
    const keyId = uuidParam('keyId', c.req.param('keyId'));
    await deps.apiKeys.revoke(c.get('principal'), keyId);
    return c.body(null, 204);
  });
  return app;
}
