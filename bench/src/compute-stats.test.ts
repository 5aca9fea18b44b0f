import { describe, expect, it } from 'vitest';
import { type BatchCounts, executedBetween } from './compute-stats.ts';

const counts = (inferences: number, executions: number, sizes: [number, number, number][]): BatchCounts => ({
  inference_count: inferences,
  execution_count: executions,
  batch_stats: sizes.map(([batch_size, count, ns]) => ({ batch_size, compute_infer: { count, ns } })),
});

describe('executedBetween', () => {
  it('counts only what ran between the two snapshots', () => {
    const before = counts(10, 4, [
      [1, 2, 2_000_000],
      [4, 2, 8_000_000],
    ]);
    // In the window: one execution of 1 row (1 ms) and three of 8 rows (4 ms each): 25 rows in 4 executions.
    const after = counts(35, 8, [
      [1, 3, 3_000_000],
      [4, 2, 8_000_000],
      [8, 3, 12_000_000],
    ]);
    const e = executedBetween(before, after, 100);
    expect(e).toMatchObject({ inferences: 25, executions: 4, bySize: { '1': 1, '8': 3 } });
    expect(e.averageBatch).toBeCloseTo(6.25);
    expect(e.inferUsPerRow).toBeCloseTo(13_000 / 25);
    // 13 ms of model runs in a 100 ms window.
    expect(e.inferPercent).toBeCloseTo(13);
  });

  it('reports no average when nothing ran', () => {
    const same = counts(5, 5, [[1, 5, 5_000_000]]);
    const e = executedBetween(same, same, 100);
    expect(e.executions).toBe(0);
    expect(e.averageBatch).toBeNaN();
    expect(e.bySize).toEqual({});
  });
});
