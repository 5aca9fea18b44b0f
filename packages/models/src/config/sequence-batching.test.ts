import { describe, expect, it } from 'vitest';
import { SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT } from '../examples/sequence-models.ts';
import { parseModelConfigText } from './parse-model-config.ts';
import { sequenceBatchingOf } from './sequence-batching.ts';

describe('sequenceBatchingOf', () => {
  it("reads Triton's simple_dyna_sequence controls, strategy and idle time", () => {
    expect(sequenceBatchingOf(parseModelConfigText(SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT))).toEqual({
      strategy: 'oldest',
      idleMicroseconds: 10_000_000,
      controls: [
        { kind: 'START', name: 'START', datatype: 'INT32', falseTrue: [0, 1] },
        { kind: 'END', name: 'END', datatype: 'INT32', falseTrue: [0, 1] },
        { kind: 'READY', name: 'READY', datatype: 'INT32', falseTrue: [0, 1] },
        { kind: 'CORRID', name: 'CORRID', datatype: 'UINT64' },
      ],
      states: [],
    });
  });

  it('defaults to direct and a 1 s idle time; none without sequence_batching', () => {
    const config = parseModelConfigText(
      'sequence_batching { control_input [ { name: "S" control [ { bool_false_true: [ false, true ] } ] } ] }',
    );
    expect(sequenceBatchingOf(config)).toEqual({
      strategy: 'direct',
      idleMicroseconds: 1_000_000,
      controls: [{ kind: 'START', name: 'S', datatype: 'BOOL', falseTrue: [false, true] }],
      states: [],
    });
    expect(sequenceBatchingOf(parseModelConfigText('max_batch_size: 4'))).toBeUndefined();
  });

  it('reads implicit state, and refuses state it cannot carry', () => {
    const config = parseModelConfigText(
      'sequence_batching { state [ { input_name: "IN_S" output_name: "OUT_S" data_type: TYPE_FP32 dims: [ 2, 3 ] } ] }',
    );
    expect(sequenceBatchingOf(config)?.states).toEqual([
      { inputName: 'IN_S', outputName: 'OUT_S', datatype: 'FP32', dims: [2, 3] },
    ]);
    const variable = parseModelConfigText(
      'name: "v" sequence_batching { state [ { input_name: "A" output_name: "B" data_type: TYPE_FP32 dims: [ -1 ] } ] }',
    );
    expect(() => sequenceBatchingOf(variable)).toThrow("state 'A' needs fixed dims");
  });

  it('refuses a control without the values its kind needs', () => {
    const config = parseModelConfigText(
      'name: "m" sequence_batching { control_input [ { name: "R" control [ { kind: CONTROL_SEQUENCE_READY } ] } ] }',
    );
    expect(() => sequenceBatchingOf(config)).toThrow(
      "failed to load 'm': sequence batching control 'R' needs int32_false_true, fp32_false_true or bool_false_true with two values",
    );
  });
});
