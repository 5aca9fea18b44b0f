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

  it('keeps success, failure and queue totals per batch size apart from the v2 snapshot', () => {
    const s = new ModelStatistics('simple', '1');
    const t = { queueNs: 10, computeInputNs: 1, computeInferNs: 5, computeOutputNs: 2, totalNs: 20 };
    for (const batch of [2, 2, 8]) {
      s.started();
      s.succeeded(batch, t);
    }
    s.started();
    s.failed(7, 'OTHER', 4);
    s.started();
    s.failed(3, 'OTHER');
    expect(s.batchSizeStats()).toEqual([
      {
        batch_size: 2,
        success: { count: 2, ns: 40 },
        fail: { count: 0, ns: 0 },
        queue: { count: 2, ns: 20 },
        compute_input: { count: 2, ns: 2 },
        compute_infer: { count: 2, ns: 10 },
        compute_output: { count: 2, ns: 4 },
      },
      expect.objectContaining({ batch_size: 4, success: { count: 0, ns: 0 }, fail: { count: 1, ns: 7 } }),
      expect.objectContaining({ batch_size: 8, success: { count: 1, ns: 20 } }),
    ]);
    // The v2 batch_stats keep their shape and list only batch sizes that completed a request.
    expect(s.snapshot().batch_stats.map((b) => Object.keys(b))).toEqual([
      ['batch_size', 'compute_input', 'compute_infer', 'compute_output'],
      ['batch_size', 'compute_input', 'compute_infer', 'compute_output'],
    ]);
    expect(s.snapshot().inference_stats.fail).toEqual({ count: 2, ns: 10 });
  });
});
