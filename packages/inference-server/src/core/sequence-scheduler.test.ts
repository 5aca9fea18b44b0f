import { describe, expect, it } from 'vitest';
import { SequenceScheduler } from './sequence-scheduler.ts';

const config = {
  controls: [
    { kind: 'START' as const, name: 'START', datatype: 'INT32' as const, falseTrue: [0, 1] as [number, number] },
  ],
  states: [],
  idleMicroseconds: 1_000_000,
  strategy: 'direct' as const,
};

describe('SequenceScheduler', () => {
  it('ends a sequence idle longer than max_sequence_idle_microseconds: its next request needs START again', () => {
    const scheduler = new SequenceScheduler('m', config, true);
    scheduler.admit({ sequence_id: 7, sequence_start: true }, 1, 0).done();
    expect(() => scheduler.admit({ sequence_id: 7 }, 1, 900).done()).not.toThrow();
    expect(() => scheduler.admit({ sequence_id: 7 }, 1, 2000)).toThrow(
      "inference request for sequence 7 to model 'm' must specify the START flag on the first request of the sequence",
    );
  });

  it('feeds START as the config says, shaped [1, 1] for a batching model', () => {
    const scheduler = new SequenceScheduler('m', config, true);
    const first = scheduler.admit({ sequence_id: 'a', sequence_start: true }, 1, 0);
    expect(first.inputs()).toEqual([{ name: 'START', datatype: 'INT32', shape: [1, 1], data: Int32Array.of(1) }]);
    first.done();
    const next = scheduler.admit({ sequence_id: 'a' }, 1, 1);
    expect(next.inputs()[0]?.data).toEqual(Int32Array.of(0));
  });

  it('tells a string id from the same digits as an integer', () => {
    const scheduler = new SequenceScheduler('m', config, false);
    scheduler.admit({ sequence_id: 5, sequence_start: true }, 1, 0).done();
    expect(() => scheduler.admit({ sequence_id: '5' }, 1, 1)).toThrow('must specify the START flag');
  });
});
