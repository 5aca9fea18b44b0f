import type { Datatype } from '@nvcf/protocol';
import { apiDatatype } from './config-datatypes.ts';
import type { ModelConfig } from './model-config.ts';
import { ModelConfigError } from './proto-schema.ts';

export type SequenceControlKind = 'START' | 'READY' | 'END' | 'CORRID';

/** One control input the sequence batcher feeds the model (Triton model configuration: sequence batcher controls). */
export interface SequenceControl {
  kind: SequenceControlKind;
  /** The model input it feeds. */
  name: string;
  datatype: Datatype;
  /** START / READY / END: the values for false and true (`int32_false_true`, `fp32_false_true`, `bool_false_true`). */
  falseTrue?: [number, number] | [boolean, boolean];
}

/**
 * Implicit state (Triton's `sequence_batching.state`): the model's `outputName` after one request of a sequence is
 * its `inputName` on the next; zeros on the first.
 */
export interface SequenceState {
  inputName: string;
  outputName: string;
  datatype: Datatype;
  /** Without the batch dimension. */
  dims: number[];
}

/** `sequence_batching` as the scheduler needs it. */
export interface SequenceBatching {
  controls: SequenceControl[];
  states: SequenceState[];
  /** A sequence with no request for this long is ended (`max_sequence_idle_microseconds`, default 1 s). */
  idleMicroseconds: number;
  strategy: 'direct' | 'oldest';
}

const KINDS: Record<string, SequenceControlKind> = {
  CONTROL_SEQUENCE_START: 'START',
  CONTROL_SEQUENCE_READY: 'READY',
  CONTROL_SEQUENCE_END: 'END',
  CONTROL_SEQUENCE_CORRID: 'CORRID',
};

/**
 * Reads a config's `sequence_batching` (undefined without one). Control kinds default to START (proto3's zero
 * value); START, READY and END need a false/true pair, CORRID a data_type (UINT64, INT64, UINT32, INT32 or STRING).
 *
 * @throws ModelConfigError `failed to load '<model>': …` for a control without what its kind needs.
 */
export function sequenceBatchingOf(config: ModelConfig): SequenceBatching | undefined {
  const raw = config.extra.sequence_batching as Record<string, unknown> | undefined;
  if (!raw) return undefined;
  const fail = (reason: string): never => {
    throw new ModelConfigError(`failed to load '${config.name}': sequence batching ${reason}`);
  };
  const controls: SequenceControl[] = [];
  for (const input of (raw.control_input as { name?: string; control?: Record<string, unknown>[] }[] | undefined) ??
    []) {
    const name = input.name ?? fail('control input has no name');
    for (const control of input.control ?? []) {
      const kind =
        KINDS[(control.kind as string | undefined) ?? 'CONTROL_SEQUENCE_START'] ??
        fail(`control '${name}' has an unknown kind`);
      if (kind === 'CORRID') {
        const type = control.data_type as ModelConfig['input'][number]['data_type'] | undefined;
        const datatype = type ? apiDatatype(type) : undefined;
        if (!datatype || !['UINT64', 'INT64', 'UINT32', 'INT32', 'BYTES'].includes(datatype)) {
          fail(
            `control '${name}' (CORRID) needs a data_type of TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING`,
          );
        }
        controls.push({ kind, name, datatype: datatype as Datatype });
        continue;
      }
      const int32 = control.int32_false_true as number[] | undefined;
      const fp32 = control.fp32_false_true as number[] | undefined;
      const bool = control.bool_false_true as boolean[] | undefined;
      if (int32?.length === 2)
        controls.push({ kind, name, datatype: 'INT32', falseTrue: [int32[0] ?? 0, int32[1] ?? 1] });
      else if (fp32?.length === 2)
        controls.push({ kind, name, datatype: 'FP32', falseTrue: [fp32[0] ?? 0, fp32[1] ?? 1] });
      else if (bool?.length === 2) {
        controls.push({ kind, name, datatype: 'BOOL', falseTrue: [bool[0] ?? false, bool[1] ?? true] });
      } else fail(`control '${name}' needs int32_false_true, fp32_false_true or bool_false_true with two values`);
    }
  }
  const states: SequenceState[] = [];
  for (const state of (raw.state as Record<string, unknown>[] | undefined) ?? []) {
    const inputName = (state.input_name as string | undefined) ?? fail('state has no input_name');
    const outputName = (state.output_name as string | undefined) ?? fail(`state '${inputName}' has no output_name`);
    const type = state.data_type as ModelConfig['input'][number]['data_type'] | undefined;
    const datatype = (type ? apiDatatype(type) : undefined) ?? fail(`state '${inputName}' needs a data_type`);
    const dims = ((state.dims as number[] | undefined) ?? []).map(Number);
    if (dims.length === 0 || dims.some((d) => !(d >= 1))) {
      fail(`state '${inputName}' needs fixed dims (variable-size state is not supported)`);
    }
    if ((state.initial_state as unknown[] | undefined)?.some((i) => !(i as { zero_data?: boolean }).zero_data)) {
      fail(`state '${inputName}': only zero_data initial states are supported`);
    }
    states.push({ inputName, outputName, datatype, dims });
  }
  return {
    controls,
    states,
    idleMicroseconds: Number(raw.max_sequence_idle_microseconds ?? 0) || 1_000_000,
    strategy: raw.oldest ? 'oldest' : 'direct',
  };
}
