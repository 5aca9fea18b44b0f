import { AppError, isScope, type Scope } from '@nvcf/protocol';
import type { ApiKeyStore } from '@nvcf/queue';
import { errors as joseErrors, jwtVerify } from 'jose';
import type { Principal } from './principal.ts';

export interface Authenticator {
  /** The principal behind an `Authorization` header value; UNAUTHENTICATED otherwise. */
  authenticate(authorization: string | undefined): Promise<Principal>;
}

export interface AuthenticatorOptions {
  keyStore: ApiKeyStore;
  /** HS256 secret for short-lived tokens; without it only API keys are accepted. */
  jwtSecret?: string;
  /** How long a verified key is trusted without asking Redis again (revocation takes effect within it). */
  cacheMs: number;
}

// NVCF's gateway answers every credential failure the same way (nvcf-api.md §4, §15 #10).
const unauthorized = () => new AppError('UNAUTHENTICATED', 'client is unauthorized');

/**
 * Bearer credentials: NVCF-style API keys (looked up by hash in Redis, cached briefly) and HS256 JWTs
 * carrying a `scope` claim (space-separated, or an array) and optionally `function_ids`.
 */
export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  const cache = new Map<string, { until: number; principal: Principal | undefined }>();
  const secret = opts.jwtSecret ? new TextEncoder().encode(opts.jwtSecret) : undefined;

  async function fromApiKey(key: string): Promise<Principal> {
    const now = Date.now();
    const hit = cache.get(key);
    let principal = hit && hit.until > now ? hit.principal : undefined;
    if (!hit || hit.until <= now) {
      const record = await opts.keyStore.verify(key);
      principal = record && {
        kind: 'api-key',
        subject: record.id,
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

  async function fromJwt(token: string): Promise<Principal> {
    if (!secret) throw unauthorized();
    try {
      const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], requiredClaims: ['exp'] });
      const raw = payload.scope;
      const names = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(/\s+/) : [];
      const scopes = new Set<Scope>(names.filter(isScope));
      const fns = payload.function_ids;
      return {
        kind: 'jwt',
        subject: typeof payload.sub === 'string' ? payload.sub : 'token',
        scopes,
        ...(Array.isArray(fns) ? { allowedFunctionIds: new Set(fns.map(String)) } : {}),
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) throw unauthorized();
      throw err;
    }
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
