import { AppError, type Scope } from '@nvcf/protocol';

/** Who is calling, as far as authorization cares. */
export interface Principal {
  kind: 'api-key' | 'jwt';
  /** Key id or token subject; safe to log (never the credential). */
  subject: string;
  scopes: ReadonlySet<Scope>;
  /** Absent: every function. */
  allowedFunctionIds?: ReadonlySet<string>;
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
