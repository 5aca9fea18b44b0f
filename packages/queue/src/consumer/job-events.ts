import type { JobContext } from '../invocation-consumer.ts';
import type { InvocationResult } from '../invocation-result.ts';
import type { InvocationJob } from '../job-contract.ts';

/** Which job, which try, and when its run started (ms since the epoch). */
interface JobRun {
  job: InvocationJob;
  ctx: JobContext;
  startedAt: number;
}

/**
 * What a consumer reports of each try of a job it runs, as it happens: metrics and logs subscribe
 * (`InvocationConsumer.on('job', …)`) instead of wrapping the processor.
 * - `started`: the processor was called;
 * - `finished`: it resolved, with the answer to store (none: the request was settled already);
 * - `threw`: it rejected (the try is retried while attempts remain, else answered as failed).
 */
export type JobEvent =
  | (JobRun & { type: 'started' })
  | (JobRun & { type: 'finished'; at: number; result: InvocationResult | undefined })
  | (JobRun & { type: 'threw'; at: number; error: unknown });

export type JobListener = (event: JobEvent) => void;
