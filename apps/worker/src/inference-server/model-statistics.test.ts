import { describe, expect, it } from 'vitest';
import { ModelStatistics } from './model-statistics.ts';

describe('ModelStatistics', () => {
  it('accumulates Triton statistics per request, per batch size, and failures by reason', () => {
    const s = new ModelStatistics('simple', '1');
    s.started();
    expect(s.pending).toBe(1);
    s.succeeded(4, { queueNs: 10, computeInputNs: 20, computeInferNs: 300, computeOutputNs: 5, totalNs: 400 });
    s.started();
    s.succeeded(1, { queueNs: 1, computeInputNs: 2, computeInferNs: 30, computeOutputNs: 1, totalNs: 40 });
    s.started();
    s.failed(7, 'OTHER');
    const snap = s.snapshot();
    expect(s.pending).toBe(0);
    expect(snap).toMatchObject({
      name: 'simple',
      version: '1',
      inference_count: 5,
      execution_count: 2,
      inference_stats: {
        success: { count: 2, ns: 440 },
        fail: { count: 1, ns: 7 },
        queue: { count: 2, ns: 11 },
        compute_infer: { count: 2, ns: 330 },
      },
    });
    expect(snap.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [1, 1],
      [4, 1],
    ]);
    expect(snap.last_inference).toBeGreaterThan(0);
    expect(s.failures()).toEqual({ REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 1 });
  });
});
