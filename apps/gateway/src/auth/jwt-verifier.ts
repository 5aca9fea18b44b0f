import { AppError, isScope, NCA_ID_PATTERN } from '@nvcf/protocol';
import { errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import type { Principal } from './principal.ts';

export interface JwtOptions {
  /** HS256 secret; without it no token is accepted. */
  secret?: string;
  /** Longest lifetime a token may claim: a leaked token is good for at most this long. */
  maxTtlSeconds: number;
  /** When set, a token's `iss` must be this. */
  issuer?: string;
  /** When set, a token's `aud` must name this. */
  audience?: string;
}

const claimType = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

/**
 * The claims of a gateway token, checked once its signature is. `sub` is required because the subject is
 * the principal: assets, functions and the rate bucket belong to it, so subject-less tokens would all
 * share them. `function_ids` must be an array: anything else used to be read as "every function".
 */
const TokenClaims = z.object({
  sub: z.string({ error: claimType('a string') }).min(1, 'must not be empty'),
  exp: z.number({ error: claimType('a number (seconds)') }),
  iat: z.number({ error: claimType('a number (seconds)') }).optional(),
  scope: z
    .union([z.string(), z.array(z.string())], { error: 'must be a space-separated string or an array of strings' })
    .optional(),
  function_ids: z
    .array(z.string({ error: 'must be an array of function ids (strings)' }), {
      error: 'must be an array of function ids (strings)',
    })
    .optional(),
  nca_id: z
    .string({ error: 'must be a string (an NCA id)' })
    .regex(NCA_ID_PATTERN, 'must be 1–128 visible ASCII characters (an NCA id)')
    .optional(),
});
type TokenClaims = z.infer<typeof TokenClaims>;

const unauthorized = (detail: string) => new AppError('UNAUTHENTICATED', detail);

/**
 * A JWS in compact form is exactly three unpadded base64url segments (RFC 7515 §7.1, §2). jose's decoder
 * tolerates `=` padding, so `<token>=` verified too: one signature, many accepted spellings of it.
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * How long the token is good for: from its issue (or from now, when it has no `iat` or claims to be
 * issued in the future) to its expiry.
 */
function tokenLifetimeSeconds(claims: Pick<TokenClaims, 'exp' | 'iat'>, nowSeconds: number): number {
  return claims.exp - Math.min(claims.iat ?? nowSeconds, nowSeconds);
}

/**
 * HS256 bearer tokens: `sub`, `exp` (at most `maxTtlSeconds` after `iat`), a `scope` claim
 * (space-separated, or an array), optionally `function_ids` and `nca_id` (the account; absent: `homeNcaId`, the
 * gateway's own). A token that is not ours (bad signature, malformed) gets the same answer as an unknown key; a
 * genuine token with bad claims is told which.
 *
 * @example
 * const verify = createJwtVerifier({ secret, maxTtlSeconds: 86_400 }, 'self-hosted');
 * const principal = await verify(token); // AppError UNAUTHENTICATED when refused
 */
export function createJwtVerifier(opts: JwtOptions, homeNcaId: string): (token: string) => Promise<Principal> {
  const secret = opts.secret ? new TextEncoder().encode(opts.secret) : undefined;

  async function verified(token: string) {
    if (!secret || !COMPACT_JWS.test(token)) throw unauthorized('client is unauthorized');
    try {
      const { payload } = await jwtVerify(token, secret, {
        algorithms: ['HS256'],
        requiredClaims: ['exp', 'sub'],
        ...(opts.issuer ? { issuer: opts.issuer } : {}),
        ...(opts.audience ? { audience: opts.audience } : {}),
      });
      return payload;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthorized('token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) {
        throw unauthorized(`invalid token claim '${err.claim}': ${err.message}`);
      }
      if (err instanceof joseErrors.JOSEError) throw unauthorized('client is unauthorized');
      throw err;
    }
  }

  return async (token) => {
    const parsed = TokenClaims.safeParse(await verified(token));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw unauthorized(`invalid token claim '${String(issue?.path[0] ?? '')}': ${issue?.message ?? 'invalid'}`);
    }
    const claims = parsed.data;
    const lifetime = tokenLifetimeSeconds(claims, Math.floor(Date.now() / 1000));
    if (lifetime > opts.maxTtlSeconds) {
      throw unauthorized(
        `token lifetime of ${lifetime} s (issue to expiry) exceeds the gateway's maximum of ${opts.maxTtlSeconds} s`,
      );
    }
    const names = typeof claims.scope === 'string' ? claims.scope.split(/\s+/) : (claims.scope ?? []);
    const ncaId = claims.nca_id ?? homeNcaId;
    return {
      kind: 'jwt',
      // Namespaced, so that logs tell a token's `sub` from an API key's id; what is stored per principal is keyed
      // by `principalKey` (kind, account and subject).
      subject: `token:${claims.sub}`,
      ncaId,
      homeAccount: ncaId === homeNcaId,
      scopes: new Set(names.filter(isScope)),
      ...(claims.function_ids ? { allowedFunctionIds: new Set(claims.function_ids) } : {}),
    };
  };
}
