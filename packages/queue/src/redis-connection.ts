import { Redis, type RedisOptions } from 'ioredis';

/**
 * Opens a Redis connection. `blocking` connections (BullMQ workers, subscribers) must never give up on a
 * command (`maxRetriesPerRequest: null`): BullMQ refuses them otherwise.
 */
export function createRedis(url: string, opts: { blocking?: boolean; name?: string } = {}): Redis {
  const options: RedisOptions = {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
    // Commands issued in the same tick leave in one write: under load this halves the syscalls per request.
    enableAutoPipelining: !opts.blocking,
  };
  if (opts.name) options.connectionName = opts.name;
  return new Redis(url, options);
}
