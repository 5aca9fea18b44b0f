import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

/**
 * How often an account's entry for a version is refreshed in `accountQueues` while it queues there, and how long an
 * entry holding nothing stays after its last refresh: an entry still in use is never dropped by a reader.
 */
const ACCOUNT_QUEUE_REFRESH_MS = 60_000;
const ACCOUNT_QUEUE_IDLE_MS = 10 * ACCOUNT_QUEUE_REFRESH_MS;

/** Drops an account's entries that held nothing when read, unless queued into since (their score moved on). */
const FORGET_IDLE_QUEUES = `local n = 0
for i = 2, #ARGV do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and tonumber(at) < tonumber(ARGV[1]) then n = n + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return n`;

/** The versions each account queues into (`accountQueues`), and the bytes its requests hold in their queues. */
export class AccountQueues {
  readonly #connection: RedisClient;
  readonly #keys: Keys;
  /** When this process last refreshed an account's entry for a version (`account versionId` → ms). */
  readonly #refreshed = new Map<string, number>();

  constructor(connection: RedisClient, keys: Keys) {
    this.#connection = connection;
    this.#keys = keys;
  }

  /** Lists the version under the account (at most once a minute per pair and process: usually no command). */
  list(account: string, versionId: string): void {
    const refreshed = this.#refreshed;
    const pair = `${account} ${versionId}`;
    const now = Date.now();
    if (now - (refreshed.get(pair) ?? 0) < ACCOUNT_QUEUE_REFRESH_MS) return;
    if (refreshed.size > 100_000) refreshed.clear();
    refreshed.set(pair, now);
    // Sent ahead of the enqueue on the same connection: the entry exists by the time the bytes are counted.
    void this.#connection.zadd(this.#keys.accountQueues(account), now, versionId).catch(() => refreshed.delete(pair));
  }

  /** The bytes the account's requests hold in every version's queues; forgets the versions holding none. */
  async bytes(account: string): Promise<number> {
    const connection = this.#connection;
    const listKey = this.#keys.accountQueues(account);
    const listed = await connection.zrange(listKey, 0, -1);
    const parts = await Promise.all(listed.map((v) => connection.hget(this.#keys.queueBytes(v), `a:${account}`)));
    const idle = listed.filter((_, i) => !parts[i]);
    if (idle.length > 0) {
      await connection.eval(FORGET_IDLE_QUEUES, 1, listKey, Date.now() - ACCOUNT_QUEUE_IDLE_MS, ...idle);
    }
    return parts.reduce((sum, part) => sum + Number(part ?? 0), 0);
  }
}
