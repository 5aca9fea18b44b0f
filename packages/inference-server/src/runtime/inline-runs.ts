import type { Tensor } from '@nvcf/protocol';
import { InlineSession } from './inline-session.ts';
import type { InstanceThreadData } from './thread-messages.ts';

/**
 * The thread runs a model is judged by: when the median of its last 16 is under the limit and none took over
 * `MISS_FACTOR` times it, runs of their size move to the event loop. The median, not every run: a run on a thread
 * that has been idle a while finds cold caches and can take several times its usual time.
 */
const QUALIFYING_RUNS = 16;
/** A run that took this many times the limit is a miss (inline) or rules the model out (on a thread). */
const MISS_FACTOR = 8;
/** A fresh session's first runs are slow (its memory arena grows): they count no misses. */
const WARM_UP_RUNS = 8;
/**
 * Eight misses among the last 64 inline runs send the model back to its threads for good. One miss proves little:
 * a busy machine can preempt the process mid-run for milliseconds.
 */
const MISS_WINDOW = 64;
const MAX_MISSES = 8;

export interface InlineRunsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Where a model's smallest runs go. Handing a run to an instance thread and its answer back wakes two threads;
 * on a small model that costs far more than the inference (on a 2-core VM: ~0.7 ms of a pexec's latency beside a
 * 40 µs run). So once the median of a model's last sixteen thread runs is under `maxMicros` and none took over 8×
 * it, runs with at most as many input elements as those had execute on the event loop, on a session of its own
 * there; larger ones, and
 * every run of a model with control flow or custom operators (its time depends on what the inputs hold), stay on
 * threads. Inline runs that take far longer than the limit send the model back to its threads for good.
 * `maxMicros` 0, or a provider other than the CPU, keeps every run on threads.
 */
export interface InlineRuns {
  /** Whether a run with `elements` input elements executes on the event loop. */
  covers(elements: number): boolean;
  run(inputs: Tensor[], fetches: string[]): Promise<Tensor[]>;
  /**
   * A thread run's size and duration. Returns the opening of the inline session when this run qualified the model:
   * it resolves once runs go inline, or once the model turned out not to qualify.
   */
  observe(elements: number, ms: number): Promise<void> | undefined;
  release(): Promise<void>;
}

/** Total input elements of a request: what decides whether a run is small. */
export function inputElements(inputs: readonly Tensor[]): number {
  let n = 0;
  for (const t of inputs) n += t.data.length;
  return n;
}

export function createInlineRuns(
  data: InstanceThreadData,
  maxMicros: number,
  logger: InlineRunsLogger,
  meta: { name: string; version: string },
): InlineRuns {
  const limitMs = maxMicros / 1000;
  const session = new InlineSession(data, maxMicros, logger, meta);
  const qualifying = new QualifyingRuns(limitMs);
  const misses = new MissWindow(limitMs);
  return {
    covers: (elements) => session.covers(elements),
    async run(inputs, fetches) {
      // Wall time of the run itself: a thread's CPU time is counted in scheduler ticks (4 ms), far coarser.
      const timing = { ms: 0 };
      const outputs = await session.run(inputs, fetches, timing);
      const { ms } = timing;
      if (misses.tooMany(ms) && session.state === 'inline') {
        logger.warn(
          { model: meta.name, version: meta.version, ms: Math.round(ms * 1000) / 1000, maxMicros },
          'runs of this model on the event loop took too long: they go back to its threads',
        );
        session
          .close()
          .catch((err: unknown) =>
            logger.warn({ model: meta.name, version: meta.version, err }, 'inline session failed to close'),
          );
      }
      return outputs;
    },
    observe(elements, ms) {
      if (session.state === 'inline') {
        if (ms <= limitMs) session.widen(elements);
        return undefined;
      }
      if (session.state !== 'watching') return undefined;
      const upTo = qualifying.add(ms, elements);
      return upTo === undefined ? undefined : session.open(upTo);
    },
    release: () => session.close(),
  };
}

/** The latest thread runs: how long each took, and its size. */
class QualifyingRuns {
  readonly #limitMs: number;
  readonly #recent: { ms: number; elements: number }[] = [];

  constructor(limitMs: number) {
    this.#limitMs = limitMs;
  }

  /** Adds a thread run; when the latest qualify the model, the largest of their sizes. */
  add(ms: number, elements: number): number | undefined {
    const recent = this.#recent;
    recent.push({ ms, elements });
    if (recent.length > QUALIFYING_RUNS) recent.shift();
    if (recent.length < QUALIFYING_RUNS) return undefined;
    const times = recent.map((r) => r.ms).sort((a, b) => a - b);
    const median = times[QUALIFYING_RUNS / 2] ?? Number.POSITIVE_INFINITY;
    const slowest = times[QUALIFYING_RUNS - 1] ?? Number.POSITIVE_INFINITY;
    if (median > this.#limitMs || slowest > this.#limitMs * MISS_FACTOR) return undefined;
    return Math.max(...recent.map((r) => r.elements));
  }
}

/** Whether each of the latest inline runs (up to MISS_WINDOW) missed, and how many of them did. */
class MissWindow {
  readonly #limitMs: number;
  readonly #misses: boolean[] = [];
  #missCount = 0;
  #runs = 0;

  constructor(limitMs: number) {
    this.#limitMs = limitMs;
  }

  /** Counts an inline run that took `ms`; true once too many of the latest missed. */
  tooMany(ms: number): boolean {
    if (++this.#runs <= WARM_UP_RUNS) return false;
    const missed = ms > this.#limitMs * MISS_FACTOR;
    this.#misses.push(missed);
    if (missed) this.#missCount += 1;
    if (this.#misses.length > MISS_WINDOW && this.#misses.shift()) this.#missCount -= 1;
    return this.#missCount >= MAX_MISSES;
  }
}
