import { AccountQueues } from './account-queues.ts';
import { WORKER_QUEUE_TTL_MS } from './invocation-consumer.ts';
import { type InvocationJob, JSON_CONTENT_TYPE } from './job-contract.ts';
import { type Keys, WORKERS_GROUP } from './keys.ts';
import { type RequestScripts, withRequestScripts } from './lua-scripts.ts';
import { retireVersionQueues } from './queue-retirement.ts';
import type { RedisClient } from './redis-connection.ts';

export interface EnqueueOptions {
  /** Into this worker's own queue for the version (a sequence it owns) instead of the version's shared one. */
  worker?: string;
  /** Who made the request: status, stream and position are theirs ('' when unknown). */
  principal?: string;
  /** The job's input kept beside it (`input.kind` 'stored', or a KServe request's tensors), stored with it. */
  input?: Buffer;
  /**
   * Bytes the queue entry carries itself, raw, beside the job's JSON (a small KServe request's tensors, `inEntry`):
   * the worker reads them with the job, no second read and no key to drop. Not with `input`.
   */
  entryBytes?: Buffer;
  /** The account whose bytes in the queues the request's count among (`accountBytes`); '' when none. */
  account?: string;
}

/**
 * The request's job and input would take its version's queues past `ProducerOptions.maxVersionBytes`: nothing was
 * stored. Space returns as the version's workers finish jobs.
 */
export class QueueBytesError extends Error {
  readonly versionId: string;
  readonly maxBytes: number;
  constructor(versionId: string, maxBytes: number) {
    super(`the queues of function version '${versionId}' hold their most bytes (${maxBytes})`);
    this.name = 'QueueBytesError';
    this.versionId = versionId;
    this.maxBytes = maxBytes;
  }
}

export interface InvocationProducer {
  /**
   * Records the request (state `queued`) and queues its job in one step. Adding the same request twice is a
   * no-op: false then.
   * @throws QueueBytesError when the job and its input would take the version's queues past their bound
   */
  enqueue(job: InvocationJob, opts?: EnqueueOptions): Promise<boolean>;
  /**
   * The bytes an account's requests hold in every version's queues (jobs and inputs waiting or running): one read
   * of each version it queued into, and of the list of them.
   */
  accountBytes(account: string): Promise<number>;
  /** Jobs waiting or running for a version (retries waiting out their pause included). */
  depth(versionId: string): Promise<number>;
  /** Jobs waiting (not yet taken by a worker) for a version: one Redis command. */
  waiting(versionId: string): Promise<number>;
  /**
   * How many requests wait ahead of this one in its version's queue; 0 once a worker has it;
   * undefined when the queue does not hold it (finished, or unknown).
   */
  position(versionId: string, requestId: string): Promise<number | undefined>;
  /**
   * Removes a deleted version's queues. Each request still waiting in them is handed to `settle` first (to be
   * answered: nothing will run it now). Jobs already running finish their requests as usual.
   */
  retire(versionId: string, settle: (requestId: string) => Promise<void>): Promise<void>;
  /**
   * Takes a request's job out of its version's shared queue while no worker holds it (a cancelled request):
   * true when it was removed. A job a worker already runs, or one in a worker's own queue (a sequence), stays;
   * the worker skips it once it sees the request settled.
   */
  withdraw(versionId: string, requestId: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface ProducerOptions {
  /** Attempts for retryable failures; stalled-job recovery does not consume attempts. */
  attempts: number;
  /** How long a request's record (and its kept input) lives. */
  ttlSeconds: number;
  /** Bytes one version's queues may hold (its requests' jobs and inputs) before `enqueue` refuses; 0: unbounded. */
  maxVersionBytes?: number;
}

/**
 * The gateway's side of the invocation queues: one Redis stream per function version (keys.ts `queue`), read by
 * the workers' consumer group (invocation-consumer.ts). Each call is one script: one round trip, one hash slot.
 */
export function createInvocationProducer(
  connection: RedisClient,
  keys: Keys,
  opts: ProducerOptions,
): InvocationProducer {
  const r = withRequestScripts(connection);
  const accounts = new AccountQueues(connection, keys);
  return {
    ...queueReads(r, keys),
    async enqueue(job, to = {}) {
      const q = keys.queue(job.versionId, to.worker);
      const record = keys.request(job.requestId);
      const account = to.account ?? '';
      if (account) accounts.list(account, job.versionId);
      const args = [
        opts.ttlSeconds,
        job.functionId,
        to.principal ?? '',
        entryJob(job),
        opts.attempts,
        account,
        opts.maxVersionBytes ?? 0,
      ];
      const queued = to.input
        ? await r.nvcfEnqueueWithInput(record, q.stream, keys.requestInput(job.requestId), ...args, to.input)
        : await r.nvcfEnqueue(record, q.stream, ...args, ...(to.entryBytes ? [to.entryBytes] : []));
      if (queued === -1) throw new QueueBytesError(job.versionId, opts.maxVersionBytes ?? 0);
      // A worker's own queue expires unless its worker keeps it alive: one this enqueue made anew (the worker
      // stopped meanwhile) must not stay forever.
      if (to.worker !== undefined) await connection.pexpire(q.stream, WORKER_QUEUE_TTL_MS, 'NX');
      return queued === 1;
    },
    accountBytes: (account) => accounts.bytes(account),
    retire: (versionId, settle) => retireVersionQueues(connection, keys, versionId, settle),
    async withdraw(versionId, requestId) {
      const q = keys.queue(versionId);
      const removed = await r.nvcfWithdrawJob(
        keys.request(requestId),
        q.stream,
        q.delayed,
        q.delayedJobs,
        WORKERS_GROUP,
        requestId,
      );
      return removed === 1;
    },
    async close() {
      // The connection is the caller's.
    },
  };
}

/** What a version's queue holds, and where a request stands in it. */
function queueReads(r: RequestScripts, keys: Keys): Pick<InvocationProducer, 'depth' | 'waiting' | 'position'> {
  const counts = (versionId: string) => {
    const q = keys.queue(versionId);
    return r.nvcfQueueCounts(q.stream, q.delayed, WORKERS_GROUP);
  };
  return {
    async depth(versionId) {
      const [inStream, , delayed] = await counts(versionId);
      return inStream + delayed;
    },
    async waiting(versionId) {
      const [inStream, running] = await counts(versionId);
      return inStream - running;
    },
    async position(versionId, requestId) {
      const q = keys.queue(versionId);
      const ahead = await r.nvcfQueuePosition(keys.request(requestId), q.stream, q.delayed, WORKERS_GROUP, requestId);
      return ahead < 0 ? undefined : ahead;
    },
  };
}

/**
 * The job as its queue entry carries it: the entry holds the request and function ids and the queue the version,
 * so the JSON leaves them out, and what parsing puts back is implied (job-contract.ts): a JSON body's usual content
 * type, no headers.
 */
function entryJob(job: InvocationJob): string {
  const { requestId, functionId, versionId, input, headers, ...rest } = job;
  const entryInput =
    input.kind === 'json' && input.contentType === JSON_CONTENT_TYPE ? { kind: input.kind, value: input.value } : input;
  return JSON.stringify({ input: entryInput, ...(Object.keys(headers).length > 0 ? { headers } : {}), ...rest });
}
