import { AppError, NVCF_SCOPES } from '@nvcf/protocol';
import { type Principal, requireFunction } from '../auth/principal.ts';

/** How a principal is recorded on the requests it makes: kinds keep key ids and token subjects apart. */
export function principalId(principal: Principal): string {
  return `${principal.kind}:${principal.subject}`;
}

/** An operator: every NVCF scope, every function (the bootstrap admin key, or a key made like it). */
export function isAdmin(principal: Principal): boolean {
  return !principal.allowedFunctionIds && NVCF_SCOPES.every((s) => principal.scopes.has(s));
}

/**
 * A request's status, stream and queue position belong to whoever made it (and to an admin): another
 * credential with the same scope must not take someone else's result, or end their stream.
 *
 * @throws AppError PERMISSION_DENIED
 */
export function requireRequestAccess(
  principal: Principal,
  request: { requestId: string; functionId: string; principal: string },
): void {
  requireFunction(principal, request.functionId);
  if (request.principal === '' || request.principal === principalId(principal) || isAdmin(principal)) return;
  throw new AppError('PERMISSION_DENIED', `not allowed to access request '${request.requestId}'`);
}
