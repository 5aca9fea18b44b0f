import type { Scope } from '@nvcf/protocol';
import type { MiddlewareHandler } from 'hono';
import type { Authenticator } from './authenticator.ts';
import { type Principal, requireScopes } from './principal.ts';

export type AuthEnv = { Variables: { principal: Principal } };

/**
 * Authenticates the request (401) and checks it holds one of `anyOf` (403), before anything else of
 * the route runs. The principal is left in the context for function-level checks.
 */
export function requireAuth(auth: Authenticator, ...anyOf: Scope[]): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const principal = await auth.authenticate(c.req.header('authorization'));
    requireScopes(principal, anyOf);
    c.set('principal', principal);
    await next();
  };
}
