import type { SequenceBatching, SequenceControl } from '@nvcf/models';
import { AppError, type Tensor } from '@nvcf/protocol';

/** What a request says about its sequence (Triton's `sequence_id`, `sequence_start`, `sequence_end` parameters). */
interface SequenceFlags {
  id: number | bigint | string;
  start: boolean;
  end: boolean;
}

/**
 * Triton's sequence batcher for one model version, as far as stateless models and batch-1 requests need it: each
 * request names its sequence; the first must carry START; the control inputs the config declares (START, END,
 * READY, CORRID) are fed with the request; a sequence idle longer than `max_sequence_idle_microseconds` is ended.
 * Both strategies (direct, oldest) schedule alike here: every request runs as its own execution, so there are no
 * slots to keep stable.
 */
export class SequenceScheduler {
  readonly #model: string;
  readonly #config: SequenceBatching;
  readonly #batched: boolean;
  /** Sequences in flight, by id, with when they were last used (ms). */
  readonly #active = new Map<string, number>();

  constructor(model: string, config: SequenceBatching, batched: boolean) {
    this.#model = model;
    this.#config = config;
    this.#batched = batched;
  }

  /**
   * Admits a request to its sequence and returns the control tensors to run it with.
   *
   * @throws AppError INVALID_ARGUMENT with Triton's texts: no correlation id, no START on a sequence's first
   *   request (or after it ended or idled out), a batch of more than one.
   */
  admit(parameters: Record<string, unknown> | undefined, batch: number, now = Date.now()): Tensor[] {
    const flags = this.#flags(parameters);
    if (batch > 1) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference request to model '${this.#model}' must specify batch-size 1 due to requirements of sequence batcher`,
      );
    }
    const key = typeof flags.id === 'string' ? `s:${flags.id}` : `n:${flags.id}`;
    const last = this.#active.get(key);
    const idle = last !== undefined && now - last > this.#config.idleMicroseconds / 1000;
    if (!flags.start && (last === undefined || idle)) {
      this.#active.delete(key);
      throw new AppError(
        'INVALID_ARGUMENT',
        `inference request for sequence ${String(flags.id)} to model '${this.#model}' must specify the START flag on the first request of the sequence`,
      );
    }
    if (flags.end) this.#active.delete(key);
    else this.#active.set(key, now);
    this.#reapIdle(now);
    return this.#config.controls.map((control) => this.#control(control, flags));
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
    for (const [key, last] of this.#active) if (now - last > limit) this.#active.delete(key);
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
