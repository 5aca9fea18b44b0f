import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { parseRedisTarget, type RedisTarget } from './redis-target.ts';

/**
 * A connection to the product's Redis: one server (optionally behind Sentinel) or a Redis Cluster. Every command
 * the product sends names keys of one hash slot per command, script and transaction (keys.ts), so the same code
 * runs on both.
 */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /** Queue consumers (their blocking reads) and subscribers: never give up on a command. */
  blocking?: boolean;
  name?: string;
  commandTimeoutMs?: number;
  onError?: (err: Error) => void;
}

/**
 * Opens a connection to `url` (see redis-target.ts for the cluster and sentinel forms). `blocking` connections
 * (queue consumers, subscribers) must never give up on a command (`maxRetriesPerRequest: null`): a blocking read
 * waits as long as it was told to. Other connections give up on a command after `commandTimeoutMs`: a stalled Redis
 * (paused, swapping, failing over) otherwise hangs every client for as long as it lasts; the error says
 * "unavailable, try again" instead (`isRedisUnavailable`).
 */
export function createRedis(url: string, opts: RedisConnectionOptions = {}): RedisClient {
  return connect(parseRedisTarget(url), opts);
}

export function connect(target: RedisTarget, opts: RedisConnectionOptions = {}): RedisClient {
  const node: RedisOptions = {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
  };
  if (opts.name) node.connectionName = opts.name;
  if (!opts.blocking && opts.commandTimeoutMs !== undefined) node.commandTimeout = opts.commandTimeoutMs;
  // Commands issued in the same tick leave in one write: under load this halves the syscalls per request.
  // A cluster client groups them per node.
  const autoPipelining = !opts.blocking;
  let client: RedisClient;
  switch (target.kind) {
    case 'single':
      client = new Redis(target.url, { ...node, enableAutoPipelining: autoPipelining });
      break;
    case 'sentinel':
      client = new Redis({
        ...node,
        enableAutoPipelining: autoPipelining,
        sentinels: target.sentinels,
        name: target.primaryName,
        db: target.db,
        ...(target.username ? { username: target.username } : {}),
        ...(target.password !== undefined ? { password: target.password } : {}),
        ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
        ...(target.tls ? { tls: {} } : {}),
      });
      break;
    case 'cluster': {
      const options: ClusterOptions = {
        enableAutoPipelining: autoPipelining,
        // Auto-pipelining groups a command by the slot of its first argument, which for FCALL is the function's
        // name, not a key (lua-scripts.ts): sent on their own, FCALLs are routed by their keys.
        autoPipeliningIgnoredCommands: ['fcall'],
        enableReadyCheck: true,
        lazyConnect: false,
        // After a failover the old primary's slots answer MOVED (or CLUSTERDOWN while the vote runs): ioredis
        // refreshes its slot map and resends; these bound how often.
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        redisOptions: {
          ...node,
          ...(target.username ? { username: target.username } : {}),
          ...(target.password !== undefined ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        },
      };
      client = new Cluster(target.nodes, options);
      break;
    }
  }
  // While Redis is away ioredis emits an error per reconnect attempt; without a listener each one is
  // printed to stderr. The failures that matter surface where a command fails (a 503, a retried job);
  // the connection's own errors are reported at most every 10 s.
  let lastReport = 0;
  client.on('error', (err: Error) => {
    if (!opts.onError || Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    opts.onError(err);
  });
  return client;
}

/**
 * The servers holding data: the one server, or each primary of a cluster. SCAN and other whole-keyspace commands
 * go to each of them.
 */
export function primaries(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Every key matching `pattern` (SCAN's glob), on every primary. */
export async function* scanKeys(client: RedisClient, pattern: string): AsyncIterable<string[]> {
  // A cluster client knows which nodes are primaries once it has read the slot map: a command waits for that.
  await client.ping();
  for (const server of primaries(client)) {
    for await (const batch of server.scanStream({ match: pattern, count: 200 }) as AsyncIterable<string[]>) {
      if (batch.length > 0) yield batch;
    }
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Whether `err` means Redis could not be reached, did not answer in time, or is full (the caller may try again
 * shortly), as opposed to a bug or a refused command.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // Full, not broken: memory comes back as workers finish jobs and records expire.
  if (isRedisOutOfMemory(err)) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true;
  return (
    err.message === 'Command timed out' ||
    err.message.startsWith('Connection is closed') ||
    err.message.startsWith("Stream isn't writeable") ||
    err.message.startsWith('LOADING') ||
    // A cluster between a primary's failure and its replica's promotion, or with too few nodes reachable.
    err.message.startsWith('CLUSTERDOWN') ||
    // A primary that cannot reach enough replicas (min-replicas-to-write), a demoted primary, a replica cut off
    // from its primary: all pass once the failover settles.
    err.message.startsWith('NOREPLICAS') ||
    err.message.startsWith('READONLY') ||
    err.message.startsWith('MASTERDOWN') ||
    err.message.startsWith('TRYAGAIN') ||
    err.message.startsWith('Failed to refresh slots cache') ||
    err.message.startsWith('None of startup nodes is available') ||
    // A cluster client's auto-pipeline grouped by the slot map it had when the commands were issued; the map
    // changed (a failover) before they were sent.
    err.message.startsWith('All keys in the pipeline should belong to the same slots allocation group') ||
    // A blocking read on a primary that was just demoted.
    err.message.startsWith('UNBLOCKED')
  );
}

/**
 * Redis at its `maxmemory` with `noeviction` refusing a write: `OOM command not allowed when used memory >
 * 'maxmemory'`, as a command's reply, a function refused before it runs, or a script's write (then after an
 * `ERR` or with the script named after it).
 */
export function isRedisOutOfMemory(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (/^(ERR )?OOM command not allowed/.test(err.message)) return true;
  // A transaction whose commands were refused as they were queued: ioredis keeps their errors beside EXECABORT's.
  const previous: unknown = Reflect.get(err, 'previousErrors');
  return err.message.startsWith('EXECABORT') && Array.isArray(previous) && previous.some(isRedisOutOfMemory);
}

/** A stream's consumer group (or the stream itself) does not exist: nobody has read that queue yet, or it was retired. */
export function isNoGroup(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOGROUP');
}
