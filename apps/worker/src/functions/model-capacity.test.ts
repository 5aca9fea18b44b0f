import { describe, expect, it } from 'vitest';
import { modelConcurrency } from './model-capacity.ts';

const group = (count: number) => ({ name: 'g', kind: 'KIND_CPU' as const, count, gpus: [] });
const batching = {
  preferred_batch_size: [],
  max_queue_delay_microseconds: 0,
  preserve_ordering: false,
  priority_levels: 0,
  default_priority_level: 0,
};

describe('modelConcurrency', () => {
  it('holds a full batch per instance when the model batches dynamically, plus one waiting per instance', () => {
    expect(modelConcurrency({ max_batch_size: 8, dynamic_batching: batching, instance_group: [group(2)] })).toBe(18);
  });

  it('holds one per instance (plus one waiting) without dynamic batching, or when the model does not batch', () => {
    expect(modelConcurrency({ max_batch_size: 8, instance_group: [group(2), group(1)] })).toBe(6);
    expect(modelConcurrency({ max_batch_size: 0, dynamic_batching: batching, instance_group: [group(1)] })).toBe(2);
  });
});
