import { randomUUID } from 'node:crypto';
import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, accountKey, createHarness, type Harness } from './harness.ts';

/**
 * An account's admin mints keys freely (up to its key quota): a per-credential rate limit alone would let it take
 * its key count's multiple of everyone's share. The account's budget holds all its credentials together.
 */
let h: Harness;
let gw: RunningGateway;
const ACCOUNT_LIMIT = 5;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway({ RATE_LIMIT_PER_MINUTE: '1000', RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: String(ACCOUNT_LIMIT) });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/**
 * Runs `calls` inside one rate window (fixed, a minute long): when a minute boundary passed during them, the
 * counters started again midway, so they run once more on fresh buckets. Returns after checking what they saw.
 */
async function inOneWindow(calls: () => Promise<() => void>): Promise<void> {
  for (;;) {
    const minute = Math.floor(Date.now() / 60_000);
    const check = await calls();
    if (Math.floor(Date.now() / 60_000) === minute) return check();
    // Wait for the next window so the retry starts on empty buckets.
    await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 10));
  }
}

/** A rate-limited call (a status poll of an unknown request: 404 once it passed the limits). */
const poll = (key: string) =>
  fetch(`${gw.url}/v2/nvcf/pexec/status/${randomUUID()}`, { headers: { authorization: `Bearer ${key}` } });

describe('tenant isolation: rate limits per account', () => {
  it("holds every key of an account to one budget; another account's and the operator's are their own", async () => {
    // Minted by team-b's own admin, as an attacker multiplying its budget would.
    const admin = await accountKey(gw.url, 'team-b', { name: 'team-b-admin' });
    const keys = [admin];
    for (const name of ['b-1', 'b-2']) {
      const res = await fetch(`${gw.url}/v2/nvcf/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, scopes: ['invoke_function'] }),
      });
      expect(res.status).toBe(201);
      keys.push(((await res.json()) as { value: string }).value);
    }
    const other = await accountKey(gw.url, 'team-c');
    await inOneWindow(async () => {
      const statuses: number[] = [];
      for (let i = 0; i < ACCOUNT_LIMIT; i++) statuses.push((await poll(keys[i % keys.length] as string)).status);
      const refused = await Promise.all(keys.map(poll));
      // Another account has a budget of its own; the operator's account has none (only its credentials' own).
      const otherStatus = (await poll(other)).status;
      const operator: number[] = [];
      for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) operator.push((await poll(ADMIN_KEY)).status);
      return () => {
        expect(statuses).toEqual(Array(ACCOUNT_LIMIT).fill(404));
        expect(refused.map((r) => r.status)).toEqual(keys.map(() => 429));
        for (const r of refused) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(otherStatus).toBe(404);
        expect(operator).toEqual(Array(ACCOUNT_LIMIT + 2).fill(404));
      };
    });
  });

  it("names the account's budget, not the credential's, when that is what is spent", async () => {
    const key = await accountKey(gw.url, 'team-d');
    await inOneWindow(async () => {
      for (let i = 0; i < ACCOUNT_LIMIT; i++) await poll(key);
      const refused = await poll(key);
      const detail = ((await refused.json()) as { detail: string }).detail;
      return () => {
        expect(refused.status).toBe(429);
        expect(detail).toBe("rate limit exceeded for this credential's account");
      };
    });
  });
});
