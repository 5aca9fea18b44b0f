import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { InvocationJob } from './job-contract.ts';
import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

export interface ConsumerOptions {
  concurrency: number;
  /** Another queue of the version than its shared one (a worker's own, for the sequences it owns). */
  queueName?: string;
  /** How long a job's lock lives without renewal: a worker that dies releases its jobs after this. */
  lockDurationMs: number;
  /** How often this worker looks for jobs whose lock expired (stalled) and puts them back. */
  stalledIntervalMs: number;
  /** Times a job may stall before it is failed; crashes mid-job are survived up to this many times. */
  maxStalledCount: number;
}

export interface JobContext {
  /** 1 on the first try. */
  attempt: number;
  maxAttempts: number;
}

export type InvocationProcessor = (job: InvocationJob, ctx: JobContext) => Promise<void>;

/**
 * A BullMQ worker for one function version's queue. The payload is parsed at this edge; a payload that
 * does not parse can never succeed, so it fails without retries.
 */
export function createInvocationConsumer(
  connection: RedisClient,
  keys: Keys,
  versionId: string,
  processor: InvocationProcessor,
  opts: ConsumerOptions,
): Worker {
  return new Worker(
    opts.queueName ?? keys.queueName(versionId),
    async (job: Job) => {
      const parsed = InvocationJob.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`malformed invocation job: ${parsed.error.message}`);
      await processor(parsed.data, { attempt: job.attemptsMade + 1, maxAttempts: job.opts.attempts ?? 1 });
    },
    {
      connection,
      prefix: keys.bullPrefix,
      concurrency: opts.concurrency,
      lockDuration: opts.lockDurationMs,
      stalledInterval: opts.stalledIntervalMs,
      maxStalledCount: opts.maxStalledCount,
      autorun: true,
    },
  );
}
