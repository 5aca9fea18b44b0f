import { parseControlRequest } from '@nvcf/protocol';
import { type Context, Hono } from 'hono';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { requireFunction } from '../auth/principal.ts';
import type { AuthorizationService, AuthorizationTarget } from '../control/authorization-service.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, type OperationSpec, Reason } from '../http/openapi-operation.ts';
import { FUNCTION_ID, uuidPath } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import {
  AuthorizedPartiesRequest,
  AuthorizedPartiesResponse,
  ListAuthorizedPartiesResponse,
  PatchAuthorizedPartyRequest,
} from './authorization-dto.ts';

const BASE = '/v2/nvcf/authorizations/functions/:functionId';
const VERSION = `${BASE}/versions/:functionVersionId`;
/** NVCF's name for this path's version id. */
const FUNCTION_VERSION_ID = uuidPath('functionVersionId', 'The function version id.');

const tag = 'Authorized Accounts';
const SCOPES = ['authorize_clients'] as const;
const NOT_OWNER =
  'The function belongs to another account that shared it with the caller’s: only its owner manages its ' +
  'authorizations. Or: the credential is restricted to other functions.';
const unknown = (versioned: boolean) =>
  versioned
    ? 'Unknown function or version, or another account’s function not shared with the caller’s.'
    : 'Unknown function, or another account’s function not shared with the caller’s.';

type Kind = 'get' | 'set' | 'clear' | 'add' | 'remove';
const OPERATION: Record<Kind, { id: string; summary: [string, string]; description: string }> = {
  get: {
    id: 'getAuthorizedParties',
    summary: ['List account authorizations for a function', 'Get account authorizations for a function version'],
    description:
      'The accounts authorized to invoke the function besides its owner. For the function: one entry per version, ' +
      'each with its own accounts and those inherited from the function. For a version: its own and the inherited.',
  },
  set: {
    id: 'createAuthorizedParties',
    summary: ['Authorize accounts to invoke a function', 'Authorize accounts to invoke a function version'],
    description:
      'Replaces the accounts authorized to invoke every version of the function (or this version only; the ' +
      'function’s own stay inherited). Each account once; an empty list authorizes none.',
  },
  clear: {
    id: 'deleteAuthorizedParties',
    summary: ['Delete all extra authorizations for a function', 'Delete all extra authorizations for a version'],
    description:
      'Drops the accounts authorized for the function (each version keeps its own), or the version’s own (it keeps ' +
      'the inherited ones). The answer lists what remains.',
  },
  add: {
    id: 'addAuthorizedParty',
    summary: ['Authorize an additional account to invoke a function', 'Authorize an additional account for a version'],
    description:
      'Adds one account. As NVCF’s: where there are no authorized accounts to add to (for a version: of its own or ' +
      'inherited) the answer is 404 (authorize with POST first); an account already there is a 409.',
  },
  remove: {
    id: 'removeAuthorizedParty',
    summary: ['Unauthorize an account from invoking a function', 'Unauthorize an account from invoking a version'],
    description:
      'Removes one account from the function’s own accounts (or the version’s own). As NVCF’s: none of its own is a ' +
      '404, an account not among them a 400. The account loses access at once on this gateway, within ' +
      'FUNCTION_CACHE_MS on others.',
  },
};

const NVCF_SUFFIX = ['ForAllVersions', 'ForSpecificVersion'] as const;

function spec(kind: Kind, versioned: boolean): OperationSpec {
  const op = OPERATION[kind];
  const withBody = kind === 'set' || kind === 'add' || kind === 'remove';
  const body = kind === 'set' ? AuthorizedPartiesRequest : PatchAuthorizedPartyRequest;
  const list = kind === 'get' && !versioned;
  return {
    tag,
    // NVCF's operation ids.
    operationId: `${op.id}${NVCF_SUFFIX[versioned ? 1 : 0]}`,
    summary: op.summary[versioned ? 1 : 0],
    description: `${op.description} For the function’s owner only.`,
    scopes: SCOPES,
    parameters: versioned ? [FUNCTION_ID, FUNCTION_VERSION_ID] : [FUNCTION_ID],
    ...(withBody ? { requestBody: { required: true, content: jsonContent(body) } } : {}),
    responses: {
      200: list
        ? jsonResponse('Each version and its authorized accounts.', ListAuthorizedPartiesResponse)
        : jsonResponse('The function (or version) and its authorized accounts.', AuthorizedPartiesResponse),
    },
    problems: {
      400: withBody
        ? `${Reason.badJson} ${Reason.notUuid}${kind === 'remove' ? ' Or: the account is not among them.' : ''}`
        : Reason.notUuid,
      403: NOT_OWNER,
      404:
        kind === 'add'
          ? `${unknown(versioned)} Or: there are no authorized accounts to add to.`
          : kind === 'remove'
            ? `${unknown(versioned)} Or: there are no authorized accounts of its own.`
            : unknown(versioned),
      ...(kind === 'add' ? { 409: 'The account is authorized already.' } : {}),
      ...(withBody ? { 413: Reason.controlTooLarge } : {}),
    },
  };
}

/**
 * Sharing a function with other accounts (NVCF API reference: authorized accounts):
 * `GET|POST|DELETE /v2/nvcf/authorizations/functions/{functionId}[/versions/{functionVersionId}]` and
 * `PATCH …/add`, `PATCH …/remove`, scope `authorize_clients`, for the function's owner.
 */
export function authorizationRoutes(service: AuthorizationService, auth: Authenticator): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const authorizer = requireAuth(auth, ...SCOPES);
  const targetOf = (c: Context<AuthEnv>): AuthorizationTarget => {
    const functionId = uuidParam('functionId', c.req.param('functionId') ?? '');
    requireFunction(c.get('principal'), functionId);
    const version = c.req.param('functionVersionId');
    return version === undefined ? { functionId } : { functionId, versionId: uuidParam('functionVersionId', version) };
  };
  const ncaIdOf = (c: Context<AuthEnv>) => c.get('principal').ncaId;

  for (const versioned of [false, true]) {
    const path = versioned ? VERSION : BASE;
    app.get(path, describeOperation(spec('get', versioned)), authorizer, async (c) => {
      const target = targetOf(c);
      if (target.versionId === undefined) {
        return c.json({ functions: await service.list(ncaIdOf(c), target.functionId) });
      }
      return c.json({ function: await service.get(ncaIdOf(c), { ...target, versionId: target.versionId }) });
    });
    app.post(path, describeOperation(spec('set', versioned)), authorizer, async (c) => {
      const target = targetOf(c);
      const req = parseControlRequest(AuthorizedPartiesRequest, await readJsonBody(c.req.raw));
      return c.json({ function: await service.set(ncaIdOf(c), target, req.authorizedParties) });
    });
    app.delete(path, describeOperation(spec('clear', versioned)), authorizer, async (c) => {
      return c.json({ function: await service.clear(ncaIdOf(c), targetOf(c)) });
    });
    for (const kind of ['add', 'remove'] as const) {
      app.patch(`${path}/${kind}`, describeOperation(spec(kind, versioned)), authorizer, async (c) => {
        const target = targetOf(c);
        const req = parseControlRequest(PatchAuthorizedPartyRequest, await readJsonBody(c.req.raw));
        return c.json({ function: await service[kind](ncaIdOf(c), target, req.authorizedParty) });
      });
    }
  }
  return app;
}
