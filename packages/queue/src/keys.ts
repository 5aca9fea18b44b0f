import { createHash, randomBytes, randomUUID } from 'node:crypto';

/**
 * Every Redis key and channel this product uses is built here, and nowhere else.
 * `prefix` isolates deployments (and tests) sharing one Redis.
 *
 * Redis Cluster places a key by the part between its first `{` and `}` (its hash tag,
 * https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags), and every command, script
 * and transaction must touch one slot. So:
 * - a function version's queue (its stream, its delayed retries, its workers' own queues), its sequences and the
 *   records of its requests (record, input, events, cancel flags) share the version's tag: the 8 hex digits
 *   `versionTag` gives;
 * - a request id begins with its version's tag (`newRequestId`), so a status poll, which knows only the request id,
 *   finds the record in one round trip and the record sits beside its queue;
 * - the control plane's small sets share one tag each (`{fn}` functions, `{auth}` API keys, `{assets}` assets),
 *   as their scripts and transactions span several keys; different functions' traffic spreads over the cluster.
 */
/**
 * The consumer group of every queue's stream: the workers, each reading as a consumer of its own name.
 * complete-request.lua names it too (one argument fewer per invocation).
 */
export const WORKERS_GROUP = 'workers';

/** The keys of one invocation queue (invocation-consumer.ts reads it, invocation-producer.ts writes it). */
export interface QueueKeys {
  /** Stream of the jobs not yet done: one entry per job, read by the workers' consumer group. */
  readonly stream: string;
  /** Sorted set: request id → when its retry is due (ms). */
  readonly delayed: string;
  /** Hash: request id → the retrying job's entry (JSON), back to the stream when due. */
  readonly delayedJobs: string;
}

export interface Keys {
  readonly prefix: string;
  /**
   * A function version's queue; with `workerId`, that worker's own queue for the version: the requests of the
   * sequences it owns (sequence routing), which must reach the instance that holds their state. A worker's own
   * queue is TTL'd (`WORKER_QUEUE_TTL_MS`, refreshed while its worker lives) and deleted by its clean shutdown.
   */
  queue(versionId: string, workerId?: string): QueueKeys;
  /** SCAN pattern matching the streams of every worker's own queue of a version. */
  workerQueuesPattern(versionId: string): string;
  /**
   * Hash: the bytes a version's queues hold (its requests' jobs and inputs, waiting or running): `t` in all,
   * `a:<account>` per account, `r:<request id>` per request. Kept by the queue scripts (lua/queue-bytes.lua, which
   * builds this name from the queue's); deleted with the version's queues.
   */
  queueBytes(versionId: string): string;
  /**
   * Sorted set: the versions an account has queued requests into → when it last did (ms). What an account holds in
   * every queue together is the sum of its part of each (`queueBytes`). In the account's own slot.
   */
  accountQueues(ncaId: string): string;
  /**
   * What precedes a request id in its record's key, given the request's tag: scripts that handle many jobs of one
   * queue build the records' keys (all in the queue's slot) from it, as `prefix .. '{' .. tag .. '}:' .. id`.
   */
  readonly requestKeyPrefix: string;
  /** String: the worker that owns one sequence of a function version. TTL'd (the sequence's idle time). */
  sequenceOwner(versionId: string, sequenceKey: string): string;
  /** Hash: the state and, once terminal, the result of one invocation. TTL'd. */
  request(requestId: string): string;
  /** String: a large invocation input, kept beside (not inside) its job. TTL'd like the request. */
  requestInput(requestId: string): string;
  /**
   * Pub/sub channel carrying the request id of every invocation that reached a terminal state. complete-request.lua
   * builds this name and `replies`' from the request key's prefix, as it builds the request id from its tail.
   */
  readonly completions: string;
  /** Pub/sub channel of one gateway process: small results of the requests it accepted, inline. */
  replies(gatewayId: string): string;
  /** Hash: API key id → key record (JSON). */
  readonly apiKeys: string;
  /** String: the id of the API key whose SHA-256 is `sha256hex` (the key itself is never stored). */
  apiKeyByHash(sha256hex: string): string;
  /** Counter of one subject's requests in one rate-limit window. TTL'd. */
  rateWindow(subject: string, window: number): string;
  /** Pub/sub channel: function versions were created, deployed, undeployed or deleted. */
  readonly deploymentsChanged: string;
  /** Sorted set: object-store key of a large result → when it may be deleted (ms). */
  readonly resultObjectExpiries: string;
  /** Redis Stream of one request's events (SSE), kept with a TTL so a late reader misses nothing. */
  events(requestId: string): string;
  /** Set when the client of a streaming request went away: the worker stops generating. TTL'd. */
  cancelled(requestId: string): string;
  /** Counts the streams that took charge of a request (its start, then each resume): a leaver cancels only if none came after it. */
  streamAttach(requestId: string): string;
  /** Pub/sub channel carrying the request id whenever events were appended for it. */
  readonly eventsAppended: string;
  /** Set of function ids. */
  readonly functionIds: string;
  /** Hash versionId → FunctionVersion JSON for one function. */
  functionVersions(functionId: string): string;
  /**
   * Hash of the accounts authorized to invoke one function besides its owner: `f:<ncaId>` (every version) and
   * `v:<versionId>:<ncaId>` (that version) → the party (JSON). Beside the function's versions, in `{fn}`.
   */
  functionAuthorizations(functionId: string): string;
  /**
   * Set of the ids of the functions one account owns: what its listing and its function quota read, so neither
   * reads every account's functions. In `{fn}`, beside the versions the quota script counts against.
   */
  accountFunctions(ncaId: string): string;
  /**
   * Set of the ids of other accounts' functions shared with one account (some version or all of them). Kept by the
   * authorization scripts, which build it from `accountKeyPrefix` for the accounts they find in a hash.
   */
  accountSharedFunctions(ncaId: string): string;
  /** What precedes an account id in its `{fn}` index keys: `accountKeyPrefix .. ncaId .. ':shared'`. */
  readonly accountKeyPrefix: string;
  /** Sorted set workerId → heartbeat expiry (ms) of the workers serving a version. */
  versionWorkers(versionId: string): string;
  /**
   * String: a version's secrets, encrypted (secret-cipher.ts; never plaintext). In the version's slot; deleted with
   * the version.
   */
  functionSecrets(versionId: string): string;
  /** Hash workerId → LiveWorker JSON (its pool, GPU, instance type, heartbeat expiry): what cluster groups list. */
  readonly workers: string;
  /** String: one asset record (JSON). TTL'd. */
  asset(assetId: string): string;
  /** Sorted set assetId → expiry (ms) of one owner's assets (the list endpoint). TTL'd. */
  ownerAssets(ownerSubject: string): string;
  /** Sorted set assetId → expiry (ms) of every asset: what reclaiming expired assets' objects reads. */
  readonly assetExpiries: string;
  /**
   * String `<requestId> <fingerprint>`: the request an `Idempotency-Key` of one principal started.
   * `keyHash` is the SHA-256 of principal and key (neither is stored). TTL'd like the request.
   */
  idempotency(keyHash: string): string;
}

export function createKeys(prefix = 'nvcf'): Keys {
  if (!/^[A-Za-z0-9_.-]+$/.test(prefix)) throw new Error(`invalid key prefix '${prefix}'`);
  const v = (versionId: string) => `{${versionTag(versionId)}}`;
  const r = (requestId: string) => `{${requestTag(requestId)}}`;
  const queueKeys = (name: string): QueueKeys => ({
    stream: `${prefix}:q:${name}`,
    delayed: `${prefix}:q-delayed:${name}`,
    delayedJobs: `${prefix}:q-delayed-jobs:${name}`,
  });
  return {
    prefix,
    queue: (versionId, workerId) =>
      queueKeys(
        workerId === undefined
          ? `${v(versionId)}:${versionId}`
          : `${v(versionId)}:${versionId}:w:${workerId.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
      ),
    workerQueuesPattern: (versionId) => `${prefix}:q:${v(versionId)}:${versionId}:w:*`,
    queueBytes: (versionId) => `${prefix}:q-bytes:${v(versionId)}:${versionId}`,
    accountQueues: (ncaId) => `${prefix}:account-queues:{a:${encodeURIComponent(ncaId)}}`,
    requestKeyPrefix: `${prefix}:req:`,
    sequenceOwner: (versionId, sequenceKey) => `${prefix}:seq:${v(versionId)}:${versionId}:${sequenceKey}`,
    request: (requestId) => `${prefix}:req:${r(requestId)}:${requestId}`,
    requestInput: (requestId) => `${prefix}:req-input:${r(requestId)}:${requestId}`,
    completions: `${prefix}:completions`,
    replies: (gatewayId) => `${prefix}:replies:${gatewayId}`,
    apiKeys: `${prefix}:{auth}:apikeys`,
    events: (requestId) => `${prefix}:events:${r(requestId)}:${requestId}`,
    cancelled: (requestId) => `${prefix}:cancelled:${r(requestId)}:${requestId}`,
    streamAttach: (requestId) => `${prefix}:stream-attach:${r(requestId)}:${requestId}`,
    eventsAppended: `${prefix}:events-appended`,
    resultObjectExpiries: `${prefix}:results:expiries`,
    deploymentsChanged: `${prefix}:deployments-changed`,
    rateWindow: (subject, window) => `${prefix}:rate:${subject}:${window}`,
    apiKeyByHash: (sha256hex) => `${prefix}:{auth}:apikey:${sha256hex}`,
    functionIds: `${prefix}:{fn}:functions`,
    functionVersions: (functionId) => `${prefix}:{fn}:fn:${functionId}:versions`,
    functionAuthorizations: (functionId) => `${prefix}:{fn}:fn:${functionId}:authorizations`,
    accountFunctions: (ncaId) => `${prefix}:{fn}:account:${ncaId}:functions`,
    accountSharedFunctions: (ncaId) => `${prefix}:{fn}:account:${ncaId}:shared`,
    accountKeyPrefix: `${prefix}:{fn}:account:`,
    versionWorkers: (versionId) => `${prefix}:fv:${v(versionId)}:${versionId}:workers`,
    functionSecrets: (versionId) => `${prefix}:fv:${v(versionId)}:${versionId}:secrets`,
    workers: `${prefix}:workers`,
    asset: (assetId) => `${prefix}:{assets}:asset:${assetId}`,
    ownerAssets: (ownerSubject) => `${prefix}:{assets}:owner:${ownerSubject}`,
    assetExpiries: `${prefix}:{assets}:expiries`,
    idempotency: (keyHash) => `${prefix}:idem:${keyHash}`,
  };
}

const HEX8 = /^[0-9a-f]{8}/i;

/**
 * A function version's hash tag: the first 8 hex digits of its id (version ids are UUIDs, whose leading digits are
 * random), or of the SHA-1 of an id that does not start with them.
 */
export function versionTag(versionId: string): string {
  return HEX8.test(versionId)
    ? versionId.slice(0, 8).toLowerCase()
    : createHash('sha1').update(versionId).digest('hex').slice(0, 8);
}

/** A request's hash tag: the first 8 characters of its id, which `newRequestId` made its version's tag. */
export function requestTag(requestId: string): string {
  return requestId.slice(0, 8).toLowerCase();
}

/**
 * A new request id for a version: a random UUID (version 4 layout) whose first 8 hex digits are the version's tag,
 * so the request's keys land in its queue's hash slot. 92 random bits remain: ids stay unguessable.
 */
export function newRequestId(versionId: string): string {
  return `${versionTag(versionId)}${randomUUID().slice(8)}`;
}

/**
 * A new gateway process id: it names the process's reply channel (`replies`) and rides in every job it queues, so
 * it is short — 72 random bits in 12 URL-safe characters, ample for the gateways alive at once.
 */
export function newGatewayId(): string {
  return randomBytes(9).toString('base64url');
}
