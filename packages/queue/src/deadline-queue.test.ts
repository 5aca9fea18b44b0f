import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue } from './deadline-queue.ts';

describe('DeadlineQueue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires callbacks in deadline order with one timer', () => {
    vi.useFakeTimers();
    const q = new DeadlineQueue();
    const fired: number[] = [];
    const t0 = Date.now();
    for (const d of [50, 10, 30, 20, 40]) q.add(t0 + d, () => fired.push(d));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(25);
    expect(fired).toEqual([10, 20]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([10, 20, 30, 40, 50]);
    expect(q.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never fires a cancelled deadline and re-arms for the next one', () => {
    vi.useFakeTimers();
    const q = new DeadlineQueue();
    const fired: string[] = [];
    const t0 = Date.now();
    const a = q.add(t0 + 10, () => fired.push('a'));
    q.add(t0 + 20, () => fired.push('b'));
    a.cancel();
    vi.advanceTimersByTime(15);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['b']);
  });

  it('re-arms earlier when a sooner deadline arrives', () => {
    vi.useFakeTimers();
    const q = new DeadlineQueue();
    const fired: string[] = [];
    const t0 = Date.now();
    q.add(t0 + 1000, () => fired.push('late'));
    q.add(t0 + 5, () => fired.push('soon'));
    vi.advanceTimersByTime(6);
    expect(fired).toEqual(['soon']);
    expect(vi.getTimerCount()).toBe(1);
  });

  it('keeps heap order under many random deadlines', () => {
    vi.useFakeTimers();
    const q = new DeadlineQueue();
    const fired: number[] = [];
    const t0 = Date.now();
    const ds = Array.from({ length: 500 }, (_, i) => (i * 7919) % 997);
    for (const d of ds) q.add(t0 + d, () => fired.push(d));
    vi.advanceTimersByTime(2000);
    expect(fired).toEqual([...ds].sort((x, y) => x - y));
  });
});
