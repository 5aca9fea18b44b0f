import { AppError } from '@nvcf/protocol';
import { isOperator, type Principal, requireFunction } from '../auth/principal.ts';
import type { FunctionResolver } from './function-resolver.ts';
import type { RequestAccess } from './invocation-service.ts';

/** How a principal is recorded on the requests it makes: kinds keep key ids and token subjects apart. */
export function principalId(principal: Principal): string {
  return `${principal.kind}:${principal.subject}`;
}

/** Refuses (PERMISSION_DENIED) a principal the request is not for; see `createRequestAccessCheck`. */
export type RequestAccessCheck = (principal: Principal, request: RequestAccess) => Promise<void>;

/**
 * A request's status, stream, queue position and cancel belong to whoever made it (and to an operator,
 * `isOperator`): another credential with the same scope must not take someone else's result, or end their
 * stream. And only while the caller's account may still use the function version: a request made on a
 * function another account shared is refused once that account withdraws the authorization (within the
 * resolver's cache window). A version deleted since has nothing left to protect: its requests stay their
 * maker's.
 *
 * @example
 * const check = createRequestAccessCheck(resolver);
 * await check(principal, { requestId, functionId, versionId, principal: 'api-key:…' }); // throws when refused
 */
export function createRequestAccessCheck(functions: Pick<FunctionResolver, 'mayUse'>): RequestAccessCheck {
  return async (principal, request) => {
    requireFunction(principal, request.functionId);
    if (isOperator(principal)) return;
    if (request.principal !== '' && request.principal !== principalId(principal)) {
      throw new AppError('PERMISSION_DENIED', `not allowed to access request '${request.requestId}'`);
    }
    if ((await functions.mayUse(request.functionId, request.versionId, principal.ncaId)) === false) {
      throw new AppError(
        'PERMISSION_DENIED',
        `not allowed to access request '${request.requestId}': account '${principal.ncaId}' is not authorized for ` +
          `function '${request.functionId}' version '${request.versionId}'`,
      );
    }
  };
}
