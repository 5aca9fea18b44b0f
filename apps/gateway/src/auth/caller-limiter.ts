import type { RateLimiter } from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';
import { type Principal, principalKey } from './principal.ts';

const UNLIMITED = { ok: true, retryAfterSeconds: 0 } as const;

/** The request budgets of one caller: its credential's, and its whole account's. */
export interface CallerLimiter {
  /**
   * Counts one call against the caller's credential and its account.
   *
   * @throws AppError RESOURCE_EXHAUSTED (429 / gRPC 8) with `retryAfterSeconds`, naming which budget is spent
   */
  take(principal: Principal): Promise<void>;
}

/**
 * Per credential (`RATE_LIMIT_PER_MINUTE`) and per account (`RATE_LIMIT_PER_ACCOUNT_PER_MINUTE`): an account's
 * admin may mint keys, so a per-credential budget alone lets one account multiply its share by its key count.
 * The operator's own account (`NVCF_NCA_ID`) has no account budget: a single-tenant installation is not slowed
 * by a limit meant to keep tenants apart. The account's bucket is named apart from every `principalKey`.
 */
export function createCallerLimiter(perCredential: RateLimiter, perAccount: RateLimiter): CallerLimiter {
  return {
    async take(principal) {
      const [credential, account] = await Promise.all([
        perCredential.take(principalKey(principal)),
        principal.homeAccount ? UNLIMITED : perAccount.take(`account:${encodeURIComponent(principal.ncaId)}`),
      ]);
      if (!credential.ok) {
        throw new AppError('RESOURCE_EXHAUSTED', 'rate limit exceeded for this credential', {
          retryAfterSeconds: credential.retryAfterSeconds,
        });
      }
      if (!account.ok) {
        throw new AppError('RESOURCE_EXHAUSTED', "rate limit exceeded for this credential's account", {
          retryAfterSeconds: account.retryAfterSeconds,
        });
      }
    },
  };
}
