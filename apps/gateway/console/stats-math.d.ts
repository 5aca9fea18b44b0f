// Types of stats-math.js for the gateway's TypeScript (its unit test); the browser loads the .js itself.

/** One read of `GET /v2/nvcf/stats/functions/{fid}/versions/{vid}`, with the time it was taken. */
export interface Sample {
  t: number;
  queueDepth: number;
  accepted: number;
  finished: Record<string, number>;
  latency: { buckets: { le: number; count: number }[]; count: number; sumSeconds: number };
}

export function rates(a: Sample, b: Sample): { throughput: number; errors: number };

export function quantile(a: Sample, b: Sample, q: number): number;
