/**
 * Every Redis key and channel this product uses is built here, and nowhere else.
 * `prefix` isolates deployments (and tests) sharing one Redis.
 */
export interface Keys {
  readonly prefix: string;
  /** BullMQ's own prefix: its keys live under `<prefix>:bull:<queue>:*`. */
  readonly bullPrefix: string;
  /** One queue per function version. BullMQ forbids ':' in queue names. */
  queueName(versionId: string): string;
  /**
   * One worker's own queue for a function version: the requests of the sequences it owns (sequence routing), which
   * must reach the instance that holds their state.
   */
  workerQueueName(versionId: string, workerId: string): string;
  /** String: the worker that owns one sequence of a function version. TTL'd (the sequence's idle time). */
  sequenceOwner(versionId: string, sequenceKey: string): string;
  /** Hash: the state and, once terminal, the result of one invocation. TTL'd. */
  request(requestId: string): string;
  /** String: a large invocation input, kept beside (not inside) its job. TTL'd like the request. */
  requestInput(requestId: string): string;
  /** Pub/sub channel carrying the request id of every invocation that reached a terminal state. */
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
  /** Sorted set workerId → heartbeat expiry (ms) of the workers serving a version. */
  versionWorkers(versionId: string): string;
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
  return {
    prefix,
    bullPrefix: `${prefix}:bull`,
    queueName: (versionId) => `fv-${versionId}`,
    workerQueueName: (versionId, workerId) => `fv-${versionId}-w-${workerId.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
    sequenceOwner: (versionId, sequenceKey) => `${prefix}:seq:${versionId}:${sequenceKey}`,
    request: (requestId) => `${prefix}:req:${requestId}`,
    requestInput: (requestId) => `${prefix}:req-input:${requestId}`,
    completions: `${prefix}:completions`,
    replies: (gatewayId) => `${prefix}:replies:${gatewayId}`,
    apiKeys: `${prefix}:apikeys`,
    events: (requestId) => `${prefix}:events:${requestId}`,
    cancelled: (requestId) => `${prefix}:cancelled:${requestId}`,
    streamAttach: (requestId) => `${prefix}:stream-attach:${requestId}`,
    eventsAppended: `${prefix}:events-appended`,
    resultObjectExpiries: `${prefix}:results:expiries`,
    deploymentsChanged: `${prefix}:deployments-changed`,
    rateWindow: (subject, window) => `${prefix}:rate:${subject}:${window}`,
    apiKeyByHash: (sha256hex) => `${prefix}:apikey:${sha256hex}`,
    functionIds: `${prefix}:functions`,
    functionVersions: (functionId) => `${prefix}:fn:${functionId}:versions`,
    versionWorkers: (versionId) => `${prefix}:fv:${versionId}:workers`,
    asset: (assetId) => `${prefix}:asset:${assetId}`,
    ownerAssets: (ownerSubject) => `${prefix}:assets:owner:${ownerSubject}`,
    assetExpiries: `${prefix}:assets:expiries`,
    idempotency: (keyHash) => `${prefix}:idem:${keyHash}`,
  };
}
