import { Queue } from 'bullmq';
import { INVOCATION_JOB_NAME, type InvocationJob } from './job-contract.ts';
import type { Keys } from './keys.ts';
import { type RedisClient, scanKeys } from './redis-connection.ts';

export interface InvocationProducer {
  /**
   * Adds the job with the request id as job id: adding the same request twice is a no-op. With `worker`, into that
   * worker's own queue for the version (a sequence it owns) instead of the version's shared one.
   */
  enqueue(job: InvocationJob, opts?: { worker?: string }): Promise<void>;
  /** Jobs waiting or running for a version. */
  depth(versionId: string): Promise<number>;
  /** Jobs waiting (not yet taken by a worker) for a version: one Redis command. */
  waiting(versionId: string): Promise<number>;
  /**
   * How many requests wait ahead of this one in its version's queue; 0 once a worker has it;
   * undefined when the queue does not hold it (finished, or unknown).
   */
  position(versionId: string, requestId: string): Promise<number | undefined>;
  /**
   * Removes a deleted version's queue and everything BullMQ keeps for it. Each request still waiting in
   * it is handed to `settle` first (to be answered: nothing will run it now). Jobs already running finish
   * their requests as usual.
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
}

/** One BullMQ queue per function version, created lazily and sharing the caller's connection. */
export function createInvocationProducer(
  connection: RedisClient,
  keys: Keys,
  opts: ProducerOptions,
): InvocationProducer {
  const queues = new Map<string, Queue>();
  const named = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection, prefix: keys.bullPrefix });
      queues.set(name, q);
    }
    return q;
  };
  const queueFor = (versionId: string) => named(keys.queueName(versionId));
  return {
    async enqueue(job, to = {}) {
      const queue = to.worker ? named(keys.workerQueueName(job.versionId, to.worker)) : queueFor(job.versionId);
      await queue.add(INVOCATION_JOB_NAME, job, {
        jobId: job.requestId,
        attempts: opts.attempts,
        backoff: { type: 'exponential', delay: 200 },
        // A finished job keeps nothing: its result lives in the request record (with its TTL), and a
        // kept job would hold the whole input until later jobs of the same queue pruned it.
        removeOnComplete: true,
        removeOnFail: true,
      });
    },
    async depth(versionId) {
      const counts = await queueFor(versionId).getJobCounts('wait', 'active', 'delayed', 'prioritized');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    },
    async waiting(versionId) {
      return connection.llen(queueFor(versionId).toKey('wait'));
    },
    async position(versionId, requestId) {
      const q = queueFor(versionId);
      // BullMQ pushes new jobs on the left of the wait list and workers take from the right.
      const [[, index], [, length], [, active]] = (await connection
        .multi()
        .lpos(q.toKey('wait'), requestId)
        .llen(q.toKey('wait'))
        .lpos(q.toKey('active'), requestId)
        .exec()) as [[null, number | null], [null, number], [null, number | null]];
      if (index !== null) return length - 1 - index;
      return active !== null ? 0 : undefined;
    },
    async retire(versionId, settle) {
      // The shared queue, and the workers' own queues of the version (sequence routing), found by their keys.
      const shared = keys.queueName(versionId);
      const own = new Set<string>();
      const pattern = `${keys.bullPrefix}:${keys.workerQueueName(versionId, '')}*:meta`;
      for await (const batch of scanKeys(connection, pattern)) {
        for (const key of batch) own.add(key.slice(keys.bullPrefix.length + 1, -':meta'.length));
      }
      for (const name of [shared, ...own]) {
        const q = named(name);
        const waiting = await q.getJobs(['wait', 'delayed', 'prioritized']);
        for (const job of waiting) if (job.id) await settle(job.id);
        await q.obliterate({ force: true });
        await q.close();
        queues.delete(name);
      }
    },
    async withdraw(versionId, requestId) {
      // BullMQ removes a job only while it is not locked by a worker: 1 when it did.
      return (await queueFor(versionId).remove(requestId)) === 1;
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
    },
  };
}
