import type { ExecutedBatches } from './compute-report.ts';
import type { HttpClient } from './http-client.ts';

/** The counters of one model version's statistics that say how requests were batched and computed. */
export interface BatchCounts {
  inference_count: number;
  execution_count: number;
  /** Per executed batch size: one count per execution, the executions' model run wall time in ns. */
  batch_stats: { batch_size: number; compute_infer: { count: number; ns: number } }[];
}

/** The model's cumulative counters, to difference around a window. */
export async function batchCounts(client: HttpClient, model: string): Promise<BatchCounts> {
  const res = await client.request('GET', `/v2/models/${model}/stats`);
  if (res.status !== 200) throw new Error(`stats ${model}: HTTP ${res.status}`);
  const { model_stats } = JSON.parse(res.body.toString()) as { model_stats: BatchCounts[] };
  if (!model_stats[0]) throw new Error(`stats ${model}: no model_stats`);
  return model_stats[0];
}

/** What the model executed between two snapshots taken `windowMs` apart. */
export function executedBetween(before: BatchCounts, after: BatchCounts, windowMs: number): ExecutedBatches {
  const inferences = after.inference_count - before.inference_count;
  const executions = after.execution_count - before.execution_count;
  const earlier = new Map(before.batch_stats.map((b) => [b.batch_size, b.compute_infer]));
  const bySize: Record<string, number> = {};
  let rows = 0;
  let inferNs = 0;
  for (const b of after.batch_stats) {
    const n = b.compute_infer.count - (earlier.get(b.batch_size)?.count ?? 0);
    if (n <= 0) continue;
    bySize[String(b.batch_size)] = n;
    rows += n * b.batch_size;
    inferNs += b.compute_infer.ns - (earlier.get(b.batch_size)?.ns ?? 0);
  }
  return {
    inferences,
    executions,
    averageBatch: executions > 0 ? inferences / executions : Number.NaN,
    bySize,
    inferUsPerRow: rows > 0 ? inferNs / rows / 1000 : Number.NaN,
    inferPercent: (inferNs / 1e6 / windowMs) * 100,
  };
}
