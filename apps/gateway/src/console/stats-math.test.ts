import { describe, expect, it } from 'vitest';
import { quantile, rates, type Sample } from '../../console/stats-math.js';

const BOUNDS = [0.1, 0.25, 1, 2.5];
const sample = (t: number, finished: Record<string, number>, perBucket: number[]): Sample => {
  let running = 0;
  const buckets = BOUNDS.map((le, i) => {
    running += perBucket[i] ?? 0;
    return { le, count: running };
  });
  const count = running + (perBucket[BOUNDS.length] ?? 0); // the last entry: observations past every bound
  return { t, queueDepth: 0, accepted: count, finished, latency: { buckets, count, sumSeconds: 0 } };
};

describe('the live view’s arithmetic over two reads of cumulative counters', () => {
  it('gives answers and errors per second between the reads', () => {
    const a = sample(0, { '200': 1 }, []);
    const b = sample(2000, { '200': 4, '500': 1 }, []);
    expect(rates(a, b)).toEqual({ throughput: 2, errors: 0.5 });
  });

  it('interpolates quantiles inside a bucket as histogram_quantile does, over what finished in between', () => {
    const a = sample(0, {}, [5]); // five fast answers before the window: not counted
    const b = sample(1000, {}, [5, 100]);
    expect(quantile(a, b, 0.5)).toBeCloseTo(0.1 + 0.15 * 0.5);
    expect(quantile(a, b, 0.99)).toBeCloseTo(0.1 + 0.15 * 0.99);
    const one = sample(1000, {}, [0, 0, 0, 1]);
    expect(quantile(sample(0, {}, []), one, 0.5)).toBeCloseTo(1.75);
  });

  it('is 0 with nothing finished, and the largest bound for answers past every bound', () => {
    const a = sample(0, {}, [1]);
    expect(quantile(a, a, 0.5)).toBe(0);
    expect(quantile(sample(0, {}, []), sample(1000, {}, [0, 0, 0, 0, 3]), 0.5)).toBe(2.5);
  });
});
