import { ApiKeyQuotaError, type ApiKeyRecord, type ApiKeyStore } from '@nvcf/control-store';
import {
  AppError,
  isPrintableText,
  NcaId,
  NON_PRINTABLE_MESSAGE,
  parseControlRequest,
  SCOPES,
  type Scope,
} from '@nvcf/protocol';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { isOperator, type Principal } from '../auth/principal.ts';
import { apiKeyQuotaExceeded } from '../control/account-quotas.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, Reason } from '../http/openapi-operation.ts';
import { timestamp, uuidPath, uuidString } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

export interface KeyRouteDeps {
  keyStore: ApiKeyStore;
  auth: Authenticator;
  /** The gateway's own account (NVCF_NCA_ID): a key stored without one belongs to it. */
  ncaId: string;
  /** Live keys per account before a new one is 403 (0 or absent: unlimited). */
  apiKeyQuotaCount?: number;
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

const apiKeyDto = (r: ApiKeyRecord, homeNcaId: string): ApiKeyDto => ({
  id: r.id,
  name: r.name,
  scopes: r.scopes,
  ...(r.allowedFunctionIds ? { functionIds: r.allowedFunctionIds } : {}),
  ncaId: r.ncaId ?? homeNcaId,
  createdAt: r.createdAt,
  ...(r.revokedAt ? { revokedAt: r.revokedAt } : {}),
});

/**
 * Why `principal` may not hand out these scopes and functions, or undefined when it may: only scopes it
 * holds, and, when it is restricted to some functions, a non-empty subset of those. Otherwise a key with
 * `manage_keys` would be a way to every other scope and function.
 */
function beyondAuthority(principal: Principal, scopes: readonly Scope[], functionIds?: readonly string[]) {
  const missing = scopes.filter((s) => !principal.scopes.has(s));
  if (missing.length > 0) return `scope(s) the caller does not hold: ${missing.map((s) => `'${s}'`).join(', ')}`;
  const mine = principal.allowedFunctionIds;
  if (!mine) return undefined;
  if (!functionIds) return "every function, while the caller is restricted to some ('functionIds' must name them)";
  const others = functionIds.filter((id) => !mine.has(id));
  return others.length > 0 ? `function(s) the caller is not allowed: ${others.join(', ')}` : undefined;
}

const isSelf = (principal: Principal, id: string) => principal.kind === 'api-key' && principal.subject === id;

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
  const accountOf = (r: ApiKeyRecord) => r.ncaId ?? deps.ncaId;
  const visible = (principal: Principal, r: ApiKeyRecord) => isOperator(principal) || accountOf(r) === principal.ncaId;
  const manageable = (principal: Principal, r: ApiKeyRecord) =>
    visible(principal, r) &&
    (isSelf(principal, r.id) || beyondAuthority(principal, r.scopes, r.allowedFunctionIds) === undefined);
  const dto = (r: ApiKeyRecord) => apiKeyDto(r, deps.ncaId);

  app.get('/v2/nvcf/keys', listKeys, manager, async (c) => {
    const principal = c.get('principal');
    // Oldest first, revoked keys included (with `revokedAt`).
    const keys = (await deps.keyStore.list()).filter((r) => manageable(principal, r));
    return c.json({ keys: keys.map(dto) });
  });

  app.post('/v2/nvcf/keys', createKey, manager, async (c) => {
    const req = parseControlRequest(CreateKeyRequest, await readJsonBody(c.req.raw));
    const principal = c.get('principal');
    const functionIds = req.functionIds && [...new Set(req.functionIds.map((id) => id.toLowerCase()))];
    const refused = beyondAuthority(principal, req.scopes, functionIds);
    if (refused) throw new AppError('PERMISSION_DENIED', `cannot create a key with ${refused}`);
    const ncaId = req.ncaId ?? principal.ncaId;
    if (ncaId !== principal.ncaId && !isOperator(principal)) {
      throw new AppError(
        'PERMISSION_DENIED',
        `cannot create a key for account '${ncaId}': only an operator (every scope, in the gateway's own account) may create keys for another account`,
      );
    }
    const quota = { maxPerAccount: deps.apiKeyQuotaCount ?? 0, homeNcaId: deps.ncaId };
    const { key, record } = await deps.keyStore
      .create(
        { name: req.name, scopes: req.scopes, ...(functionIds ? { allowedFunctionIds: functionIds } : {}), ncaId },
        quota,
      )
      .catch((err: unknown) => {
        throw err instanceof ApiKeyQuotaError ? apiKeyQuotaExceeded(err.ncaId, err.limit) : err;
      });
    // The only time the secret is shown: nothing on the way may keep a copy.
    c.header('cache-control', 'no-store');
    return c.json({ key: dto(record), value: key }, 201);
  });

  app.delete('/v2/nvcf/keys/:keyId', revokeKey, manager, async (c) => {
    const keyId = uuidParam('keyId', c.req.param('keyId'));
    const principal = c.get('principal');
    const record = (await deps.keyStore.list()).find((r) => r.id === keyId);
    // Another account's key does not exist for the caller.
    if (!record || !visible(principal, record)) throw new AppError('NOT_FOUND', `API key '${keyId}' not found`);
    if (!manageable(principal, record)) {
      throw new AppError(
        'PERMISSION_DENIED',
        `not allowed to revoke API key '${keyId}': it holds more than the caller`,
      );
    }
    // Revoking twice keeps the first revokedAt.
    if (!record.revokedAt) await deps.keyStore.revoke(keyId);
    return c.body(null, 204);
  });
  return app;
}
