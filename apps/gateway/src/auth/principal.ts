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

const API_KEY_OWNER = 'api-key:';

/**
 * The one name under which a principal's own things are stored and compared: the requests it made, its assets, its
 * Idempotency-Keys, its rate and open-request buckets. It names kind, account and subject together, so that a token
 * whose `sub` another account's token also carries shares none of them. An API key is named by its id alone: a
 * random UUID minted for one account, it already names the account (and keeps what keys stored before accounts
 * were part of the name working). A token is named by its account and subject: any account may mint any `sub`.
 *
 * @example
 * principalKey(apiKey); // 'api-key:6f1c…'
 * principalKey(token); // 'jwt:team-a:token:ci-job' (the account URI-encoded: it may hold ':')
 */
export function principalKey(principal: Pick<Principal, 'kind' | 'subject' | 'ncaId'>): string {
  return principal.kind === 'api-key'
    ? `${API_KEY_OWNER}${principal.subject}`
    : `jwt:${encodeURIComponent(principal.ncaId)}:${principal.subject}`;
}

/** The API key id a `principalKey` names; undefined for a token's. */
export function apiKeyIdOf(key: string): string | undefined {
  return key.startsWith(API_KEY_OWNER) ? key.slice(API_KEY_OWNER.length) : undefined;
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
