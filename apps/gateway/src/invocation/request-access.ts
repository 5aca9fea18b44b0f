import { AppError } from '@nvcf/protocol';
import { isOperator, mayAccessFunction, type Principal, principalKey } from '../auth/principal.ts';
import type { FunctionResolver } from './function-resolver.ts';
import type { RequestAccess } from './invocation-service.ts';

/**
 * Whether the principal may read, follow and cancel the request; see `createRequestAccessCheck`. False: answer
 * exactly as for an unknown request id. Throws PERMISSION_DENIED to tell the request's own maker why it may no
 * longer have it.
 */
export type RequestAccessCheck = (principal: Principal, request: RequestAccess) => Promise<boolean>;

/**
 * A request's status, stream, queue position and cancel belong to whoever made it (`principalKey`: kind, account
 * and subject) and to an operator (`isOperator`): another credential with the same scope must not take someone
 * else's result, or end their stream. To anyone else the request does not exist: the same 404 as an unknown id,
 * so that ids (and the functions they ran on) cannot be probed. And only while the caller's account may still use
 * the function version: a request made on a function another account shared is refused to its maker once that
 * account withdraws the authorization (within the resolver's cache window), with the reason. A version deleted
 * since has nothing left to protect: its requests stay their maker's.
 *
 * @example
 * const check = createRequestAccessCheck(resolver);
 * if (!(await check(principal, { requestId, functionId, versionId, principal: 'api-key:…' }))) answerUnknown();
 */
export function createRequestAccessCheck(functions: Pick<FunctionResolver, 'mayUse'>): RequestAccessCheck {
  return async (principal, request) => {
    if (!mayAccessFunction(principal, request.functionId)) return false;
    if (isOperator(principal)) return true;
    const own = request.principal === principalKey(principal);
    // '': made before requests recorded their maker.
    if (!own && request.principal !== '') return false;
    if ((await functions.mayUse(request.functionId, request.versionId, principal.ncaId)) === false) {
      if (!own) return false;
      throw new AppError(
        'PERMISSION_DENIED',
        `not allowed to access request '${request.requestId}': account '${principal.ncaId}' is not authorized for ` +
          `function '${request.functionId}' version '${request.versionId}'`,
      );
    }
    return true;
  };
}
