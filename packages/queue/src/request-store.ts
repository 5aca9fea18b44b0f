import { type InvocationResult, storedCode, storedResult } from './invocation-result.ts';
import type { Keys, QueueKeys } from './keys.ts';
import { withRequestScripts } from './lua-scripts.ts';
import type { RedisClient } from './redis-connection.ts';

export const REQUEST_STATES = ['queued', 'in-progress', 'fulfilled', 'errored', 'delivered'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

export interface ReplyTarget {
  gatewayId: string;
  maxInlineBytes: number;
}

/** The queued job a worker's result finishes: taken off its queue (and its kept input dropped) as it is stored. */
export interface FinishedJob {
  queue: QueueKeys;
  /** The job's entry in the queue's stream. */
  entryId: string;
  /** The job's input was kept beside it (the enqueue's `input`). */
  inputKept: boolean;
}

export type RequestView =
  | { kind: 'missing' }
  | { kind: 'delivered'; functionId: string; versionId: string }
  | {
      kind: 'pending';
      state: 'queued' | 'in-progress';
      percent: number;
      /** The function's latest partial response (progress reporting), if any. */
      partial?: Buffer;
      functionId: string;
      versionId: string;
    }
  | { kind: 'result'; functionId: string; versionId: string; result: InvocationResult };

export interface RequestOwner {
  functionId: string;
  versionId: string;
  principal: string;
}

export interface RequestStore {
  /**
   * Records a new invocation (state `queued`) made by `principal` (who may read it later) without queueing a job:
   * the gateway's enqueue (invocation-producer.ts) records the requests it queues in the same step. False when the
   * id already exists.
   */
  create(requestId: string, functionId: string, versionId: string, principal?: string): Promise<boolean>;
  /**
   * Stores a terminal result and publishes the completion (and, when `reply` is given and the body is
   * small enough, the whole result to the accepting gateway). False when a terminal state already existed.
   * With `job`, that job leaves its queue in the same step, whether the result is stored or not.
   */
  complete(requestId: string, result: InvocationResult, reply?: ReplyTarget, job?: FinishedJob): Promise<boolean>;
  /** Records progress: polls answer 202 with the latest percent and partial response. */
  reportProgress(requestId: string, percent: number, partial?: Buffer): Promise<boolean>;
  /** Marks a result handed out from an inline reply as delivered. */
  markDelivered(requestId: string): Promise<void>;
  /**
   * The function version a request belongs to and the principal that made it ('' when unknown):
   * authorization before reading it, queue position.
   */
  owner(requestId: string): Promise<RequestOwner | undefined>;
  /**
   * The input kept beside a job (the enqueue's `input`): what a worker reads before it runs the job (undefined when
   * it is gone: it expired with its request).
   */
  readInput(requestId: string): Promise<Buffer | undefined>;
  /**
   * Whether the request has its answer already (or had: delivered). A worker asks before it does what cannot be
   * taken back, such as forwarding a request to a container's server, for a request cancelled after its job was
   * delivered.
   */
  settled(requestId: string): Promise<boolean>;
  /** Drops the stored input once the request is answered (its TTL would, later). */
  dropInput(requestId: string): Promise<void>;
  /** Reads the request; a terminal result is handed out exactly once (then the id answers 'delivered'). */
  take(requestId: string): Promise<RequestView>;
  /**
   * Reads the request like `take` but leaves a terminal result in place: the caller marks it delivered
   * (`markDelivered`) once the client really has it, so a connection that drops mid-answer loses nothing.
   */
  peek(requestId: string): Promise<RequestView>;
}

/**
 * The invocation record: one hash per request with a TTL, shared by every gateway and worker.
 * All transitions are Lua scripts, so racing workers and gateways see one order of events.
 */
export function createRequestStore(redis: RedisClient, keys: Keys, opts: { ttlSeconds: number }): RequestStore {
  const r = withRequestScripts(redis);
  const ttl = opts.ttlSeconds;

  return {
    async create(requestId, functionId, versionId, principal = '') {
      const key = keys.request(requestId);
      return (await r.nvcfCreateRequest(key, ttl, functionId, versionId, Date.now(), principal)) === 1;
    },
    async complete(requestId, result, reply, job) {
      const record = keys.request(requestId);
      // Only a result small enough goes whole to the gateway waiting for it; a large one is read from the record.
      const inline = reply && !result.objectKey && result.body.byteLength <= reply.maxInlineBytes;
      const args = [
        result.status,
        result.contentType,
        JSON.stringify(result.headers ?? {}),
        result.body,
        ttl,
        inline ? reply.gatewayId : '',
        (result.ok && result.objectKey) || '',
        storedCode(result),
      ];
      let stored: number;
      if (!job) stored = await r.nvcfCompleteRequest(record, ...args);
      else if (!job.inputKept) stored = await r.nvcfCompleteJob(record, job.queue.stream, ...args, job.entryId);
      else {
        const input = keys.requestInput(requestId);
        stored = await r.nvcfCompleteJobDroppingInput(record, job.queue.stream, input, ...args, job.entryId);
      }
      return stored === 1;
    },
    async owner(requestId) {
      const [functionId, versionId, principal] = await redis.hmget(keys.request(requestId), 'fid', 'vid', 'by');
      return functionId && versionId ? { functionId, versionId, principal: principal ?? '' } : undefined;
    },
    async reportProgress(requestId, percent, partial) {
      const pct = Math.max(0, Math.min(100, Math.round(percent)));
      const r2 = await r.nvcfReportProgress(keys.request(requestId), pct, partial ?? '', Date.now(), ttl);
      return r2 === 1;
    },
    async markDelivered(requestId) {
      await r.nvcfMarkDelivered(keys.request(requestId));
    },
    async settled(requestId) {
      const state = await redis.hget(keys.request(requestId), 'state');
      return state === 'fulfilled' || state === 'errored' || state === 'delivered';
    },
    async readInput(requestId) {
      return (await redis.getBuffer(keys.requestInput(requestId))) ?? undefined;
    },
    async dropInput(requestId) {
      await redis.del(keys.requestInput(requestId));
    },
    take: (requestId) => read(requestId, 'take'),
    peek: (requestId) => read(requestId, 'peek'),
  };

  async function read(requestId: string, mode: 'take' | 'peek'): Promise<RequestView> {
    const v = await r.nvcfTakeResultBuffer(keys.request(requestId), mode);
    if (v.length === 0 || !v[0]) return { kind: 'missing' };
    const state = v[0].toString() as RequestState;
    const functionId = v[2]?.toString() ?? '';
    const versionId = v[3]?.toString() ?? '';
    if (state === 'delivered') return { kind: 'delivered', functionId, versionId };
    if (state === 'queued' || state === 'in-progress') {
      return {
        kind: 'pending',
        state,
        percent: Number(v[1]?.toString() ?? 0),
        ...(v[4] ? { partial: v[4] } : {}),
        functionId,
        versionId,
      };
    }
    const result = storedResult({
      status: Number(v[4]?.toString()),
      contentType: v[5]?.toString() ?? 'application/octet-stream',
      body: v[7] ?? Buffer.alloc(0),
      headers: JSON.parse(v[6]?.toString() || '{}') as Record<string, string>,
      code: v[9]?.toString() ?? '',
      ...(v[8] ? { objectKey: v[8].toString() } : {}),
    });
    return { kind: 'result', functionId, versionId, result };
  }
}

/** Parses an inline reply frame (see complete-request.lua). Undefined when malformed. */
export function parseReplyFrame(frame: Buffer): { requestId: string; result: InvocationResult } | undefined {
  const fields: string[] = [];
  let start = 0;
  for (let i = 0; i < 5; i++) {
    const nl = frame.indexOf(10, start);
    if (nl < 0) return undefined;
    fields.push(frame.toString('utf8', start, nl));
    start = nl + 1;
  }
  const [requestId, status, code, contentType, headersJson] = fields as [string, string, string, string, string];
  let headers: Record<string, string>;
  try {
    headers = JSON.parse(headersJson) as Record<string, string>;
  } catch {
    return undefined;
  }
  return {
    requestId,
    result: storedResult({ status: Number(status), contentType, headers, body: frame.subarray(start), code }),
  };
}
