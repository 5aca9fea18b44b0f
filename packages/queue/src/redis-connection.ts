import { Redis, type RedisOptions } from 'ioredis';

/**
 * Opens a Redis connection. `blocking` connections (BullMQ workers, subscribers) must never give up on a
 * command (`maxRetriesPerRequest: null`): BullMQ refuses them otherwise. Other connections give up on a
 * command after `commandTimeoutMs`: a stalled Redis (paused, swapping, failing over) otherwise hangs
 * every client for as long as it lasts; the error says "unavailable, try again" instead
 * (`isRedisUnavailable`).
 */
export function createRedis(
  url: string,
  opts: { blocking?: boolean; name?: string; commandTimeoutMs?: number; onError?: (err: Error) => void } = {},
): Redis {
  const options: RedisOptions = {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
    // Commands issued in the same tick leave in one write: under load this halves the syscalls per request.
    enableAutoPipelining: !opts.blocking,
  };
  if (opts.name) options.connectionName = opts.name;
  if (!opts.blocking && opts.commandTimeoutMs !== undefined) options.commandTimeout = opts.commandTimeoutMs;
  const redis = new Redis(url, options);
  // While Redis is away ioredis emits an error per reconnect attempt; without a listener each one is
  // printed to stderr. The failures that matter surface where a command fails (a 503, a retried job);
  // the connection's own errors are reported at most every 10 s.
  let lastReport = 0;
  redis.on('error', (err: Error) => {
    if (!opts.onError || Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    opts.onError(err);
  });
  return redis;
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Whether `err` means Redis could not be reached or did not answer in time (the caller may try again
 * shortly), as opposed to a bug or a refused command.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true;
  return (
    err.message === 'Command timed out' ||
    err.message.startsWith('Connection is closed') ||
    err.message.startsWith("Stream isn't writeable") ||
    err.message.startsWith('LOADING')
  );
}
