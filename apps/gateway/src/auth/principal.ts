import { AppError, NVCF_SCOPES, type Scope } from '@nvcf/protocol';

/** Who is calling, as far as authorization cares. */
export interface Principal {
  kind: 'api-key' | 'jwt';
  /** Key id or token subject; safe to log (never the credential). */
  subject: string;
  /**
   * The account (NVIDIA Cloud Account id) the credential belongs to: its functions are the ones it created, and
   * it invokes another account's only where that account authorized it.
   */
  ncaId: string;
  /** `ncaId` is the gateway's own account (NVCF_NCA_ID): the operator's, whose admins act across accounts. */
  homeAccount: boolean;
  scopes: ReadonlySet<Scope>;
  /** Absent: every function. */
  allowedFunctionIds?: ReadonlySet<string>;
}

/**
 * An operator: every NVCF scope, every function, in the gateway's own account (the bootstrap admin key, or a key
 * made like it). An operator may read anyone's requests and mint keys for other accounts; an account's own admin
 * (every scope in another account) may not.
 */
export function isOperator(principal: Principal): boolean {
  return principal.homeAccount && !principal.allowedFunctionIds && NVCF_SCOPES.every((s) => principal.scopes.has(s));
}

/** 403 unless the principal holds one of `anyOf`. */
export function requireScopes(principal: Principal, anyOf: readonly Scope[]): void {
  if (anyOf.some((s) => principal.scopes.has(s))) return;
  throw new AppError('PERMISSION_DENIED', `missing scope: requires ${anyOf.map((s) => `'${s}'`).join(' or ')}`);
}

export function mayAccessFunction(principal: Principal, functionId: string): boolean {
  return !principal.allowedFunctionIds || principal.allowedFunctionIds.has(functionId);
}

/** 403 when the principal is restricted to other functions. */
export function requireFunction(principal: Principal, functionId: string): void {
  if (!mayAccessFunction(principal, functionId)) {
    throw new AppError('PERMISSION_DENIED', `not allowed to access function '${functionId}'`);
  }
}
