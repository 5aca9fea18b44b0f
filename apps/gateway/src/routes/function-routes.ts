import type { FunctionVersion } from '@nvcf/control-store';
import {
  AppError,
  CreateFunctionRequest,
  FUNCTION_FIELD_LIMITS,
  parseControlRequest,
  UpdateMetadataRequest,
} from '@nvcf/protocol';
import { type Context, Hono } from 'hono';
import type { DescribeRouteOptions } from 'hono-openapi';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { mayAccessFunction, principalKey, requireFunction } from '../auth/principal.ts';
import { type FunctionAccess, VISIBILITIES, type Visibility } from '../control/function-access.ts';
import type { FunctionService } from '../control/function-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, VERSION_ID } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import {
  CreateFunctionResponse,
  FunctionResponse,
  functionDto,
  ListFunctionIdsResponse,
  ListFunctionsResponse,
  withoutSecretNames,
} from './function-dto.ts';

/** The bodies these routes parse, under NVCF's component names. */
const CreateFunctionBody = CreateFunctionRequest.meta({
  id: 'CreateFunctionRequest',
  description: `Fields this gateway does not know are kept and returned as given: at most ${FUNCTION_FIELD_LIMITS.unknownFields} characters of JSON together.`,
});
const UpdateMetadataBody = UpdateMetadataRequest.meta({ id: 'UpdateFunctionMetadataRequest' });

const LIST = ['list_functions', 'list_functions_details'] as const;
const tag = 'Function Management';
const UNKNOWN_FUNCTION = `Unknown function. ${Reason.notVisible}`;
const UNKNOWN_VERSION = `Unknown function or version. ${Reason.notVisible}`;

/** NVCF's `visibility` query parameter of the function lists (NVCF API reference: getFunctions, getFunctionIds). */
const VISIBILITY: NonNullable<DescribeRouteOptions['parameters']>[number] = {
  in: 'query',
  name: 'visibility',
  required: false,
  description:
    'The kinds of functions listed (repeat it, or separate with commas): `private`, the caller’s account’s own; ' +
    '`authorized`, other accounts’ functions shared with it (only the versions shared); `public`, NVIDIA’s public ' +
    'functions (there are none on a self-hosted gateway). Absent: all three.',
  style: 'form',
  explode: true,
  schema: {
    type: 'array',
    items: { type: 'string', enum: [...VISIBILITIES] },
    uniqueItems: true,
    minItems: 0,
    maxItems: 2147483647,
    default: [...VISIBILITIES],
  },
};

/** `getFunction`'s `includeSecrets` query parameter. */
const INCLUDE_SECRETS: NonNullable<DescribeRouteOptions['parameters']>[number] = {
  in: 'query',
  name: 'includeSecrets',
  required: false,
  description: 'Whether `secrets` lists the version’s secret names (never their values).',
  schema: { type: 'boolean', default: true },
};

/** The `visibility` values asked for (each once), all of them when none is given; 400 for an unknown one. */
function visibilityOf(c: Context<AuthEnv>): ReadonlySet<Visibility> {
  const given = (c.req.queries('visibility') ?? []).flatMap((v) => v.split(',')).map((v) => v.trim());
  const unknown = given.filter((v) => !(VISIBILITIES as readonly string[]).includes(v));
  if (unknown.length > 0) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: 'visibility' must be ${VISIBILITIES.join(', ')}; got ${unknown.map((v) => `'${v}'`).join(', ')}`,
    );
  }
  return new Set(given.length > 0 ? (given as Visibility[]) : VISIBILITIES);
}

const createSpec = (versioned: boolean): OperationSpec => ({
  tag,
  operationId: versioned ? 'createFunctionVersion' : 'createFunction',
  summary: versioned ? 'Create a function version' : 'Create a function',
  description:
    `${versioned ? 'A new version of the function' : 'A new function, with its first version'}, status INACTIVE ` +
    'until deployed. A model function: `models[0]` names the ONNX model, `model-repository://<name>/<version>` (one ' +
    'the workers publish, whose repository function the caller may invoke) or `asset://<assetId>` (an uploaded ' +
    '`.onnx` file or a zipped Triton model directory). A ' +
    'container function: `containerImage` with `inferenceUrl` (the path pexec calls), `inferencePort`, `healthUri` ' +
    'or `health`, `containerArgs` and `containerEnvironment`; its HTTP server runs beside a worker (a sidecar, or a ' +
    'process the worker starts from `containerArgs`). Helm charts and gRPC health checks are refused.',
  scopes: ['register_function'],
  parameters: versioned ? [FUNCTION_ID] : [],
  requestBody: { required: true, content: jsonContent(CreateFunctionBody) },
  responses: { 200: jsonResponse('The created version.', CreateFunctionResponse) },
  problems: {
    400: `${Reason.badJson} Or: the model is in no worker’s repository, or is not a usable ONNX model or archive; or the function needs what this deployment cannot run (a Helm chart, a gRPC health check); or a field is past its size limit (named).${versioned ? ` ${Reason.notUuid}` : ''}`,
    403: versioned
      ? `${Reason.notOwner} Or: the function holds \`FUNCTION_VERSION_QUOTA_COUNT\` versions already.`
      : 'The account holds `FUNCTION_QUOTA_COUNT` functions already.',
    404: versioned
      ? `Unknown function, or an unknown asset in \`models[0]\`. ${Reason.notVisible}`
      : 'An unknown asset in `models[0]`.',
    413: Reason.controlTooLarge,
  },
});

/** What the function registrars share. */
interface FunctionRouteDeps {
  functions: FunctionService;
  access: FunctionAccess;
  auth: Authenticator;
}

/** The DTOs `viewer` (an account) sees: with their live workers, and whether another account owns them. */
async function withLive(functions: FunctionService, fvs: FunctionVersion[], viewer: string) {
  const { workerIds, machines } = await functions.presence(fvs.map((fv) => fv.versionId));
  return fvs.map((fv, i) => functionDto(fv, workerIds[i] ?? [], machines, viewer));
}

/** The ids of the path: a function the credential must be allowed and its account must own. */
async function owned(access: FunctionAccess, c: Context<AuthEnv>) {
  const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
  requireFunction(c.get('principal'), functionId);
  const rawVersion = c.req.param('versionId');
  const versionId = rawVersion === undefined ? undefined : uuidParam('versionId', rawVersion);
  await access.requireOwner(c.get('principal').ncaId, functionId, versionId);
  return { functionId, versionId: versionId ?? '' };
}

/**
 * Function registration and lookup (NVCF API reference: function management): one DTO per version. Hono matches
 * routes in registration order, so the parts are composed in the order their routes were always registered.
 */
export function functionRoutes(functions: FunctionService, access: FunctionAccess, auth: Authenticator): Hono<AuthEnv> {
  const deps: FunctionRouteDeps = { functions, access, auth };
  const app = new Hono<AuthEnv>();
  app.route('/', functionListRoutes(deps));
  app.route('/', functionVersionReadRoutes(deps));
  app.route('/', functionCreateRoutes(deps));
  app.route('/', functionChangeRoutes(deps));
  return app;
}

/** `GET /v2/nvcf/functions` and `GET /v2/nvcf/functions/ids`: what the credential may access, as `visibility` asks. */
function functionListRoutes({ functions, access, auth }: FunctionRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const lister = requireAuth(auth, ...LIST);
  app.get(
    '/v2/nvcf/functions',
    describeOperation({
      tag,
      operationId: 'listFunctions',
      summary: 'List functions',
      description:
        'Every version of every function the credential may access: its account’s own, and the versions other ' +
        'accounts shared with it (`ownedByDifferentAccount: true`), as `visibility` asks.',
      scopes: LIST,
      parameters: [VISIBILITY],
      responses: { 200: jsonResponse('The versions.', ListFunctionsResponse) },
      problems: { 400: 'An unknown `visibility`.' },
    }),
    lister,
    async (c) => {
      const principal = c.get('principal');
      // A key restricted to some functions sees only those.
      const all = (await access.list(principal.ncaId, visibilityOf(c))).filter((fv) =>
        mayAccessFunction(principal, fv.id),
      );
      return c.json({ functions: await withLive(functions, all, principal.ncaId) });
    },
  );
  app.get(
    '/v2/nvcf/functions/ids',
    describeOperation({
      tag,
      operationId: 'getFunctionIds',
      summary: 'List function ids',
      scopes: LIST,
      parameters: [VISIBILITY],
      responses: { 200: jsonResponse('The ids of the functions the credential may access.', ListFunctionIdsResponse) },
      problems: { 400: 'An unknown `visibility`.' },
    }),
    lister,
    async (c) => {
      const principal = c.get('principal');
      const visible = await access.list(principal.ncaId, visibilityOf(c));
      const ids = new Set(visible.map((fv) => fv.id).filter((id) => mayAccessFunction(principal, id)));
      return c.json({ functionIds: [...ids] });
    },
  );
  return app;
}

/** `GET` of one function's versions, and of one version. */
function functionVersionReadRoutes({ functions, access, auth }: FunctionRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const lister = requireAuth(auth, ...LIST);
  app.get(
    '/v2/nvcf/functions/:functionId/versions',
    describeOperation({
      tag,
      operationId: 'listFunctionVersions',
      summary: 'List a function’s versions',
      scopes: LIST,
      parameters: [FUNCTION_ID],
      responses: { 200: jsonResponse('The function’s versions, oldest first.', ListFunctionsResponse) },
      problems: { 400: Reason.notUuid, 403: Reason.functionNotAllowed, 404: UNKNOWN_FUNCTION },
    }),
    lister,
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      const principal = c.get('principal');
      requireFunction(principal, functionId);
      const versions = await access.visibleVersions(principal.ncaId, functionId);
      return c.json({ functions: await withLive(functions, versions, principal.ncaId) });
    },
  );
  app.get(
    '/v2/nvcf/functions/:functionId/versions/:versionId',
    describeOperation({
      tag,
      operationId: 'getFunction',
      summary: 'Get a function version',
      scopes: LIST,
      parameters: [FUNCTION_ID, VERSION_ID, INCLUDE_SECRETS],
      responses: { 200: jsonResponse('The version.', FunctionResponse) },
      problems: {
        400: `${Reason.notUuid} Or \`includeSecrets\` is not \`true\` or \`false\`.`,
        403: Reason.functionNotAllowed,
        404: UNKNOWN_VERSION,
      },
    }),
    lister,
    async (c) => {
      const functionId = uuidParam('functionId', c.req.param('functionId'));
      const principal = c.get('principal');
      requireFunction(principal, functionId);
      const versionId = uuidParam('versionId', c.req.param('versionId'));
      const includeSecrets = c.req.query('includeSecrets') ?? 'true';
      if (includeSecrets !== 'true' && includeSecrets !== 'false') {
        throw new AppError('INVALID_ARGUMENT', "Invalid request: 'includeSecrets' must be true or false");
      }
      const fv = await access.visibleVersion(principal.ncaId, functionId, versionId);
      const [dto] = await withLive(functions, [fv], principal.ncaId);
      return c.json({ function: dto && includeSecrets === 'false' ? withoutSecretNames(dto) : dto });
    },
  );
  return app;
}

/** `POST` of a new function, and of a new version of an owned one. */
function functionCreateRoutes({ functions, access, auth }: FunctionRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const register = requireAuth(auth, 'register_function');
  app.post('/v2/nvcf/functions', describeOperation(createSpec(false)), register, async (c) => {
    const req = parseControlRequest(CreateFunctionBody, await readJsonBody(c.req.raw));
    const principal = c.get('principal');
    // A function belongs to its creator's account; an asset model must be the creator's own.
    const fv = await functions.create(req, { ownerSubject: principalKey(principal), ncaId: principal.ncaId });
    return c.json({ function: functionDto(fv, []) });
  });
  app.post('/v2/nvcf/functions/:functionId/versions', describeOperation(createSpec(true)), register, async (c) => {
    const { functionId } = await owned(access, c);
    const req = parseControlRequest(CreateFunctionBody, await readJsonBody(c.req.raw));
    const principal = c.get('principal');
    const fv = await functions.create(req, {
      functionId,
      ownerSubject: principalKey(principal),
      ncaId: principal.ncaId,
    });
    return c.json({ function: functionDto(fv, []) });
  });
  return app;
}

/** The owner's changes to a version: its metadata, and its deletion. */
function functionChangeRoutes({ functions, access, auth }: FunctionRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.put(
    '/v2/nvcf/metadata/functions/:functionId/versions/:versionId',
    describeOperation({
      tag,
      operationId: 'updateFunctionMetadata',
      summary: 'Update a version’s tags and description',
      scopes: ['update_function'],
      parameters: [FUNCTION_ID, VERSION_ID],
      requestBody: { required: true, content: jsonContent(UpdateMetadataBody) },
      responses: { 200: jsonResponse('The updated version.', FunctionResponse) },
      problems: {
        400: `${Reason.badJson} ${Reason.notUuid}`,
        403: Reason.notOwner,
        404: UNKNOWN_VERSION,
        413: Reason.controlTooLarge,
      },
    }),
    requireAuth(auth, 'update_function'),
    async (c) => {
      const { functionId, versionId } = await owned(access, c);
      const change = parseControlRequest(UpdateMetadataBody, await readJsonBody(c.req.raw));
      const fv = await functions.updateMetadata(functionId, versionId, change);
      return c.json({ function: (await withLive(functions, [fv], fv.ncaId))[0] });
    },
  );
  app.delete(
    '/v2/nvcf/functions/:functionId/versions/:versionId',
    describeOperation({
      tag,
      operationId: 'deleteFunction',
      summary: 'Delete a function version',
      description:
        'Deletes the version (and the function with its last version). Requests still queued for it are answered ' +
        '404; a model uploaded for it is deleted.',
      scopes: ['delete_function'],
      parameters: [FUNCTION_ID, VERSION_ID],
      responses: { 204: { description: 'Deleted.' } },
      problems: { 400: Reason.notUuid, 403: Reason.notOwner, 404: UNKNOWN_VERSION },
    }),
    requireAuth(auth, 'delete_function'),
    async (c) => {
      const { functionId, versionId } = await owned(access, c);
      await functions.remove(functionId, versionId);
      return c.body(null, 204);
    },
  );
  return app;
}
