import type { ApiKeyStore } from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';
import { createJwtVerifier, type JwtOptions } from './jwt-verifier.ts';
import type { Principal } from './principal.ts';

export interface Authenticator {
  /** The principal behind an `Authorization` header value; UNAUTHENTICATED otherwise. */
  authenticate(authorization: string | undefined): Promise<Principal>;
}

export interface AuthenticatorOptions {
  keyStore: ApiKeyStore;
  /** Short-lived HS256 tokens; without a secret only API keys are accepted. */
  jwt?: JwtOptions;
  /** How long a verified key is trusted without asking Redis again (revocation takes effect within it). */
  cacheMs: number;
  /** The gateway's own account (NVCF_NCA_ID): a key or token that names none belongs to it. */
  ncaId: string;
}

// An unknown, revoked or malformed credential gets one answer: nothing to tell a guesser apart.
const unauthorized = () => new AppError('UNAUTHENTICATED', 'client is unauthorized');

/**
 * Bearer credentials: NVCF-style API keys (looked up by hash in Redis, cached briefly) and HS256 JWTs
 * (see `createJwtVerifier`).
 */
export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  const cache = new Map<string, { until: number; principal: Principal | undefined }>();
  const fromJwt = createJwtVerifier(opts.jwt ?? { maxTtlSeconds: 0 }, opts.ncaId);

  async function fromApiKey(key: string): Promise<Principal> {
    const now = Date.now();
    const hit = cache.get(key);
    let principal = hit && hit.until > now ? hit.principal : undefined;
    if (!hit || hit.until <= now) {
      const record = await opts.keyStore.verify(key);
      // A key stored before keys had accounts belongs to the gateway's own.
      const ncaId = record?.ncaId ?? opts.ncaId;
      principal = record && {
        kind: 'api-key',
        subject: record.id,
        ncaId,
        homeAccount: ncaId === opts.ncaId,
        scopes: new Set(record.scopes),
        ...(record.allowedFunctionIds ? { allowedFunctionIds: new Set(record.allowedFunctionIds) } : {}),
      };
      if (opts.cacheMs > 0) {
        if (cache.size > 10_000) cache.clear();
        cache.set(key, { until: now + opts.cacheMs, principal });
      }
    }
    if (!principal) throw unauthorized();
    return principal;
  }

  return {
    async authenticate(authorization) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
      const credential = match?.[1];
      if (!credential) throw unauthorized();
      return credential.split('.').length === 3 ? fromJwt(credential) : fromApiKey(credential);
    },
  };
}
