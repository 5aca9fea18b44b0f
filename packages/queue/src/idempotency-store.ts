import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

const CLAIM = readFileSync(new URL('./lua/claim-idempotency-key.lua', import.meta.url), 'utf8');
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const CONFIRM = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** How long a claim holds before its request is confirmed queued. */
const PENDING_CLAIM_SECONDS = 30;

export type IdempotencyClaim =
  | { kind: 'new' }
  | { kind: 'existing'; requestId: string }
  | { kind: 'mismatch'; requestId: string };

export interface IdempotencyStore {
  /**
   * Claims `key` (of `principal`) for the new request `requestId`, or answers the request the same call
   * (same fingerprint) started before, or says the key was used for a different call. Atomic: of two
   * racing calls exactly one gets `new`.
   */
  claim(principal: string, key: string, fingerprint: string, requestId: string): Promise<IdempotencyClaim>;
  /** The claimed request is recorded and queued: the key now holds for the request's whole TTL. */
  confirm(principal: string, key: string, fingerprint: string, requestId: string): Promise<void>;
  /** Gives the key up when its request could not be started after all (a retry may then start it). */
  release(principal: string, key: string, fingerprint: string, requestId: string): Promise<void>;
}

/**
 * `Idempotency-Key` (IETF httpapi draft "The Idempotency-Key HTTP Header Field"): a retried call with the
 * same key and body, from the same principal, within the request TTL, finds the request the first one
 * started instead of running the function again.
 *
 * A claim first holds for 30 s only, and for the request TTL once `confirm`ed: when Redis fails between
 * the claim and the queueing, nobody can know whether the request was queued, so the key is neither
 * released (a retry would run the function a second time) nor kept for good (a request that was never
 * queued would block its key for the whole TTL); retries meanwhile are told to come back.
 */
export function createIdempotencyStore(redis: RedisClient, keys: Keys, opts: { ttlSeconds: number }): IdempotencyStore {
  const keyOf = (principal: string, key: string) =>
    keys.idempotency(createHash('sha256').update(principal).update('\n').update(key).digest('hex'));
  return {
    async claim(principal, key, fingerprint, requestId) {
      const reply = (await redis.eval(
        CLAIM,
        1,
        keyOf(principal, key),
        requestId,
        fingerprint,
        PENDING_CLAIM_SECONDS,
      )) as [string, string?];
      if (reply[0] === 'new') return { kind: 'new' };
      return { kind: reply[0] === 'existing' ? 'existing' : 'mismatch', requestId: reply[1] ?? '' };
    },
    async confirm(principal, key, fingerprint, requestId) {
      await redis.eval(CONFIRM, 1, keyOf(principal, key), `${requestId} ${fingerprint}`, opts.ttlSeconds);
    },
    async release(principal, key, fingerprint, requestId) {
      await redis.eval(RELEASE, 1, keyOf(principal, key), `${requestId} ${fingerprint}`);
    },
  };
}
