import type { SequenceBatching, SequenceControl, SequenceState } from '@nvcf/models';
import { AppError, FIXED_ARRAY_CLASS, type Tensor } from '@nvcf/protocol';

/** What a request says about its sequence (Triton's `sequence_id`, `sequence_start`, `sequence_end` parameters). */
interface SequenceFlags {
  id: number | bigint | string;
  start: boolean;
  end: boolean;
}

/** One admitted request: when it may run, what to run it with, and where its implicit state goes afterwards. */
export interface SequenceTicket {
  /** Settles once the sequence's previous request is done: a sequence's requests run one at a time, in order. */
  turn: Promise<void>;
  /** Control inputs, then state inputs (the previous request's state outputs, zeros on START); after `turn`. */
  inputs(): Tensor[];
  /** Model outputs that are state: fetched with the request's outputs, never answered. */
  stateOutputs: string[];
  /** Keeps the run's state outputs for the sequence's next request (nothing after END). */
  keep(outputs: readonly Tensor[]): void;
  /** The request is done (answered or failed): the sequence's next request may run. Call it exactly once. */
  done(): void;
}

interface ActiveSequence {
  /** When it was last used (ms). */
  last: number;
  /** Implicit state, by the state's input name. */
  state: Map<string, Tensor>;
  /** Settles when the sequence's latest admitted request is done. */
  tail: Promise<void>;
}

/**
 * Triton's sequence batcher for one model version, for batch-1 requests: each request names its sequence; the
 * first must carry START; the control inputs the config declares (START, END, READY, CORRID) are fed with the
 * request, and its implicit state (`state`) — the previous request's state outputs, zeros on START; a sequence
 * idle longer than `max_sequence_idle_microseconds` is ended. Both strategies (direct, oldest) schedule alike
 * here: every request runs as its own execution, so there are no slots to keep stable, and the state travels
 * with the sequence rather than living in an instance.
 */
export class SequenceScheduler {
  readonly #model: string;
  readonly #config: SequenceBatching;
  readonly #batched: boolean;
  /** Sequences in flight, by id. */
  readonly #active = new Map<string, ActiveSequence>();
  #reapedAt = 0;

  constructor(model: string, config: SequenceBatching, batched: boolean) {
    this.#model = model;
    this.#config = config;
    this.#batched = batched;
  }

  /**
   * Admits a request to its sequence and returns the inputs to run it with.
   *
   * @throws AppError INVALID_ARGUMENT with Triton's texts: no correlation id, no START on a sequence's first
   *   request (or after it ended or idled out), a batch of more than one.
   */
  admit(parameters: Record<string, unknown> | undefined, batch: number, now = Date.now()): SequenceTicket {
    const flags = this.#flags(parameters);
    if (batch > 1) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference request to model '${this.#model}' must specify batch-size 1 due to requirements of sequence batcher`,
      );
    }
    const key = typeof flags.id === 'string' ? `s:${flags.id}` : `n:${flags.id}`;
    const known = this.#active.get(key);
    const idle = known !== undefined && now - known.last > this.#config.idleMicroseconds / 1000;
    if (!flags.start && (known === undefined || idle)) {
      this.#active.delete(key);
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference request for sequence ${String(flags.id)} to model '${this.#model}' must specify the START flag on the first request of the sequence`,
      );
    }
    // START begins afresh (Triton ends a sequence still in flight under the same id).
    const sequence: ActiveSequence =
      flags.start || !known ? { last: now, state: new Map(), tail: Promise.resolve() } : known;
    sequence.last = now;
    const turn = sequence.tail;
    let done!: () => void;
    sequence.tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    if (flags.end) this.#active.delete(key);
    else this.#active.set(key, sequence);
    this.#reapIdle(now);
    const states = this.#config.states;
    return {
      turn,
      inputs: () => [
        ...this.#config.controls.map((control) => this.#control(control, flags)),
        ...states.map((state) => this.#stateInput(state, sequence)),
      ],
      done,
      stateOutputs: states.map((s) => s.outputName),
      keep: (outputs) => {
        if (flags.end) return;
        for (const state of states) {
          const out = outputs.find((t) => t.name === state.outputName);
          if (out) sequence.state.set(state.inputName, { ...out, name: state.inputName });
        }
      },
    };
  }

  /** The state the model gets: a copy of what the last request left (its buffer may move to the model's thread). */
  #stateInput(state: SequenceState, sequence: ActiveSequence): Tensor {
    const kept = sequence.state.get(state.inputName);
    const shape = this.#batched ? [1, ...state.dims] : [...state.dims];
    if (kept && !Array.isArray(kept.data)) return { ...kept, shape, data: kept.data.slice() };
    if (state.datatype === 'BYTES') {
      throw new AppError('INVALID_ARGUMENT', `model '${this.#model}': BYTES implicit state is not supported`);
    }
    const count = state.dims.reduce((a, b) => a * b, 1);
    return {
      name: state.inputName,
      datatype: state.datatype,
      shape,
      data: new FIXED_ARRAY_CLASS[state.datatype](count),
    };
  }

  #flags(parameters: Record<string, unknown> | undefined): SequenceFlags {
    const id = parameters?.sequence_id;
    if (id === undefined || id === 0 || id === 0n || id === '') {
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference request to model '${this.#model}' must specify a non-zero or non-empty correlation ID`,
      );
    }
    if (typeof id !== 'number' && typeof id !== 'bigint' && typeof id !== 'string') {
      throw new AppError('INVALID_ARGUMENT', "'sequence_id' must be an unsigned integer or a string");
    }
    if (typeof id === 'number' && (!Number.isSafeInteger(id) || id < 0)) {
      throw new AppError('INVALID_ARGUMENT', "'sequence_id' must be an unsigned integer or a string");
    }
    return { id, start: this.#bool(parameters, 'sequence_start'), end: this.#bool(parameters, 'sequence_end') };
  }

  #bool(parameters: Record<string, unknown> | undefined, key: string): boolean {
    const value = parameters?.[key];
    if (value === undefined) return false;
    if (typeof value !== 'boolean') throw new AppError('INVALID_ARGUMENT', `'${key}' must be a boolean`);
    return value;
  }

  /** Sequences nobody ended: forgotten once idle, so the map does not grow with abandoned ids. */
  #reapIdle(now: number): void {
    const limit = this.#config.idleMicroseconds / 1000;
    // A walk over every sequence, so not on every request: once per idle period (at most once a second).
    if (now - this.#reapedAt < Math.min(limit, 1000)) return;
    this.#reapedAt = now;
    for (const [key, sequence] of this.#active) if (now - sequence.last > limit) this.#active.delete(key);
  }

  /** One control tensor, shaped [1, 1] when the model batches, else [1]. */
  #control(control: SequenceControl, flags: SequenceFlags): Tensor {
    const shape = this.#batched ? [1, 1] : [1];
    const { name, datatype } = control;
    if (control.kind === 'CORRID') return { name, datatype, shape, data: corridData(datatype, flags.id) };
    const on = control.kind === 'START' ? flags.start : control.kind === 'END' ? flags.end : true;
    const value = control.falseTrue?.[on ? 1 : 0] ?? (on ? 1 : 0);
    if (datatype === 'BOOL') return { name, datatype, shape, data: Uint8Array.of(value ? 1 : 0) };
    if (datatype === 'FP32') return { name, datatype, shape, data: Float32Array.of(Number(value)) };
    return { name, datatype, shape, data: Int32Array.of(Number(value)) };
  }
}

/** The correlation id in the CORRID control's datatype: 32-bit types take its low 32 bits, as Triton's do. */
function corridData(datatype: string, id: number | bigint | string): Tensor['data'] {
  if (datatype === 'BYTES') return [new TextEncoder().encode(String(id))];
  let big: bigint;
  try {
    big = BigInt(id);
  } catch {
    throw new AppError(
      'INVALID_ARGUMENT',
      `sequence id '${String(id)}' is not an integer, which the model's CORRID needs`,
    );
  }
  if (datatype === 'UINT64') return BigUint64Array.of(BigInt.asUintN(64, big));
  if (datatype === 'INT64') return BigInt64Array.of(BigInt.asIntN(64, big));
  if (datatype === 'UINT32') return Uint32Array.of(Number(BigInt.asUintN(32, big)));
  return Int32Array.of(Number(BigInt.asIntN(32, big)));
}
