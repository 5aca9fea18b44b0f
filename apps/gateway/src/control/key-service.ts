import { ApiKeyQuotaError, type ApiKeyRecord, type ApiKeyStore } from '@nvcf/control-store';
import { AppError, type Scope } from '@nvcf/protocol';
import { isOperator, type Principal } from '../auth/principal.ts';
import { apiKeyQuotaExceeded } from './account-quotas.ts';

/** A key as its managers see it: its account resolved, never its secret (only its hash is stored). */
export interface ApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  /** Absent: every function. */
  functionIds?: string[];
  /** The account it belongs to (a key stored without one: the gateway's own). */
  ncaId: string;
  createdAt: string;
  revokedAt?: string;
}

/** What a caller asks a new key to be. */
export interface ApiKeyRequest {
  name: string;
  scopes: Scope[];
  /** Absent: every function. */
  functionIds?: string[];
  /** Absent: the caller's account. */
  ncaId?: string;
}

/**
 * API keys managed by callers holding `manage_keys`. A caller sees and revokes the keys of its account it could
 * have created (and itself), so a restricted manager cannot list or revoke the admin key, and one account's admin
 * cannot see another's keys. An operator (`isOperator`) sees every account's keys and creates keys for other
 * accounts: that is how a second account comes to be.
 */
export interface KeyService {
  /** Oldest first, revoked keys included (with `revokedAt`): the keys `principal` may manage. */
  list(principal: Principal): Promise<ApiKey[]>;
  /**
   * A new key and its secret (shown this once). PERMISSION_DENIED beyond the caller's authority, for another
   * account (not an operator), or past the account's quota.
   */
  create(principal: Principal, req: ApiKeyRequest): Promise<{ key: ApiKey; secret: string }>;
  /** NOT_FOUND for an unknown key or another account's; PERMISSION_DENIED when it holds more than the caller. */
  revoke(principal: Principal, keyId: string): Promise<void>;
}

export interface KeyServiceOptions {
  /** The gateway's own account (NVCF_NCA_ID): a key stored without one belongs to it. */
  ncaId: string;
  /** Live keys per account before a new one is 403 (0 or absent: unlimited). */
  quotaCount?: number;
}

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

/** Whose a stored key is, and which keys a principal sees and manages. */
function keyAccounts(homeNcaId: string) {
  const accountOf = (r: ApiKeyRecord) => r.ncaId ?? homeNcaId;
  const visible = (principal: Principal, r: ApiKeyRecord) => isOperator(principal) || accountOf(r) === principal.ncaId;
  const manageable = (principal: Principal, r: ApiKeyRecord) =>
    visible(principal, r) &&
    (isSelf(principal, r.id) || beyondAuthority(principal, r.scopes, r.allowedFunctionIds) === undefined);
  const view = (r: ApiKeyRecord): ApiKey => ({
    id: r.id,
    name: r.name,
    scopes: r.scopes,
    ...(r.allowedFunctionIds ? { functionIds: r.allowedFunctionIds } : {}),
    ncaId: accountOf(r),
    createdAt: r.createdAt,
    ...(r.revokedAt ? { revokedAt: r.revokedAt } : {}),
  });
  return { visible, manageable, view };
}

export function createKeyService(
  store: Pick<ApiKeyStore, 'list' | 'create' | 'revoke'>,
  opts: KeyServiceOptions,
): KeyService {
  const { visible, manageable, view } = keyAccounts(opts.ncaId);
  return {
    async list(principal) {
      return (await store.list()).filter((r) => manageable(principal, r)).map(view);
    },

    async create(principal, req) {
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
      const quota = { maxPerAccount: opts.quotaCount ?? 0, homeNcaId: opts.ncaId };
      const { key, record } = await store
        .create(
          { name: req.name, scopes: req.scopes, ...(functionIds ? { allowedFunctionIds: functionIds } : {}), ncaId },
          quota,
        )
        .catch((err: unknown) => {
          throw err instanceof ApiKeyQuotaError ? apiKeyQuotaExceeded(err.ncaId, err.limit) : err;
        });
      return { key: view(record), secret: key };
    },

    async revoke(principal, keyId) {
      const record = (await store.list()).find((r) => r.id === keyId);
      // Another account's key does not exist for the caller.
      if (!record || !visible(principal, record)) throw new AppError('NOT_FOUND', `API key '${keyId}' not found`);
      if (!manageable(principal, record)) {
        throw new AppError(
          'PERMISSION_DENIED',
          `not allowed to revoke API key '${keyId}': it holds more than the caller`,
        );
      }
      // Revoking twice keeps the first revokedAt.
      if (!record.revokedAt) await store.revoke(keyId);
    },
  };
}
