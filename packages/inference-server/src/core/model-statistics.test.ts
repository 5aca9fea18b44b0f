import { describe, expect, it } from 'vitest';
import { ModelStatistics } from './model-statistics.ts';

describe('ModelStatistics', () => {
  it('accumulates Triton statistics per request, per batch size, and failures by reason', () => {
    const s = new ModelStatistics('simple', '1');
    s.started();
    expect(s.pending).toBe(1);
    const four = { queueNs: 10, computeInputNs: 20, computeInferNs: 300, computeOutputNs: 5, totalNs: 400 };
    s.executed(4, four);
    s.succeeded(4, four);
    s.started();
    const one = { queueNs: 1, computeInputNs: 2, computeInferNs: 30, computeOutputNs: 1, totalNs: 40 };
    s.executed(1, one);
    s.succeeded(1, one);
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
      s.executed(batch, t);
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
    // The v2 batch_stats keep their shape and list only batch sizes that were executed.
    expect(s.snapshot().batch_stats.map((b) => Object.keys(b))).toEqual([
      ['batch_size', 'compute_input', 'compute_infer', 'compute_output'],
      ['batch_size', 'compute_input', 'compute_infer', 'compute_output'],
    ]);
    expect(s.snapshot().inference_stats.fail).toEqual({ count: 2, ns: 10 });
  });

  it('counts a batch of requests as one execution, keyed by the executed size (Triton v2 batch_stats)', () => {
    const s = new ModelStatistics('simple', '1');
    const compute = { computeInputNs: 3, computeInferNs: 50, computeOutputNs: 2 };
    for (let i = 0; i < 5; i++) s.started();
    s.executed(5, compute);
    for (let i = 0; i < 5; i++) s.succeeded(1, { ...compute, queueNs: 10 + i, totalNs: 100 });
    const snap = s.snapshot();
    expect(s.pending).toBe(0);
    expect(snap).toMatchObject({
      inference_count: 5,
      execution_count: 1,
      // Per request, each with the compute time of the execution it ran in, as Triton reports them.
      inference_stats: {
        success: { count: 5, ns: 500 },
        queue: { count: 5, ns: 60 },
        compute_infer: { count: 5, ns: 250 },
      },
    });
    expect(snap.batch_stats).toEqual([
      {
        batch_size: 5,
        compute_input: { count: 1, ns: 3 },
        compute_infer: { count: 1, ns: 50 },
        compute_output: { count: 1, ns: 2 },
      },
    ]);
    // Triton v1 infer_stats stay keyed by the requests' own batch size.
    expect(s.batchSizeStats().map((b) => [b.batch_size, b.success.count])).toEqual([[1, 5]]);
  });
});
