import type { ConsumerOptions, InvocationProcessor, JobContext } from '../invocation-consumer.ts';
import type { InvocationResult } from '../invocation-result.ts';
import { type InvocationJob, inputKeptBeside } from '../job-contract.ts';
import { type Keys, type QueueKeys, WORKERS_GROUP } from '../keys.ts';
import type { RequestScripts } from '../lua-scripts.ts';
import { isRedisUnavailable } from '../redis-connection.ts';
import type { FinishedJob, RequestStore } from '../request-store.ts';
import { attemptsOf, entryTime, parseJob, type StreamEntry } from './job-entry.ts';
import type { JobListener } from './job-events.ts';
import { pause } from './pause.ts';
import type { QueueMaintenance } from './queue-maintenance.ts';

/** Runs one delivered entry's job to its end: answered (the job leaves the queue with it), or queued for a retry. */
export type RunJob = (entry: StreamEntry) => Promise<void>;

export interface RunnerParts {
  scripts: RequestScripts;
  keys: Keys;
  queue: QueueKeys;
  versionId: string;
  store: RequestStore;
  processor: InvocationProcessor;
  retry: QueueMaintenance['retry'];
  /** Tells the consumer's job listeners (never throws). */
  report: JobListener;
}

export function createJobRunner(parts: RunnerParts, opts: Pick<ConsumerOptions, 'failure' | 'lockDurationMs'>): RunJob {
  const { scripts: r, keys, queue: q, versionId, store, processor, retry, report } = parts;

  async function run({ entryId, fields, bytes }: StreamEntry): Promise<void> {
    const requestId = fields.get('id') ?? '';
    const { attempt, maxAttempts } = attemptsOf(fields);
    const finished = (inputKept: boolean): FinishedJob => ({ queue: q, entryId, inputKept });
    const job = parseJob(fields, versionId, bytes);
    if (!job.success) {
      const answer = opts.failure(requestId, `malformed invocation job: ${job.error}`);
      await store.complete(requestId, answer, undefined, finished(true));
      return;
    }
    let result: InvocationResult | undefined;
    const ctx: JobContext = { attempt, maxAttempts, queuedAt: entryTime(entryId) };
    if (bytes) ctx.entryBytes = bytes;
    const started = { job: job.data, ctx, startedAt: Date.now() };
    report({ type: 'started', ...started });
    try {
      result = await processor(job.data, ctx);
      report({ type: 'finished', ...started, at: Date.now(), result });
    } catch (err) {
      report({ type: 'threw', ...started, at: Date.now(), error: err });
      if (attempt < maxAttempts) {
        await retry(entryId, requestId, fields, attempt);
        return;
      }
      result = opts.failure(requestId, err instanceof Error ? err.message : String(err));
    }
    await settle(requestId, job.data, result, finished(inputKeptBeside(job.data.input)));
  }

  /** Stores the run's answer as the job leaves the queue; with none (the request was settled already), just leaves. */
  async function settle(
    requestId: string,
    job: InvocationJob,
    answer: InvocationResult | undefined,
    done: FinishedJob,
  ) {
    // The run is over: its answer must not be lost to a Redis that is away for a moment (a failover).
    await persistently(opts.lockDurationMs, async () => {
      if (answer) await store.complete(requestId, answer, job.reply, done);
      else await leave(requestId, done);
    });
  }

  /** Takes a job whose request was settled already off the queue (and releases the bytes it held there). */
  async function leave(requestId: string, job: FinishedJob): Promise<void> {
    if (job.inputKept) {
      await r.nvcfLeaveJobDroppingInput(q.stream, keys.requestInput(requestId), WORKERS_GROUP, job.entryId, requestId);
    } else await r.nvcfLeaveJob(q.stream, WORKERS_GROUP, job.entryId, requestId);
  }

  return run;
}

/**
 * Tries `op` again while Redis is unavailable, for up to about a lease: after that the job is recovered as stalled
 * and run again elsewhere anyway.
 */
async function persistently<T>(lockDurationMs: number, op: () => Promise<T>): Promise<T> {
  const until = Date.now() + lockDurationMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await op();
    } catch (err) {
      if (!isRedisUnavailable(err) || Date.now() + delay > until) throw err;
      await pause(delay);
    }
  }
}
