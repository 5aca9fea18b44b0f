import { readFile, stat } from 'node:fs/promises';
import { isStraightLineGraph } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import type * as ort from 'onnxruntime-node';
import { createSession, runSession } from './session-run.ts';
import type { InstanceThreadData } from './thread-messages.ts';

/**
 * The thread runs a model is judged by: when the median of its last 16 is under the limit and none took over
 * `MISS_FACTOR` times it, runs of their size move to the event loop. The median, not every run: a run on a thread
 * that has been idle a while finds cold caches and can take several times its usual time.
 */
const QUALIFYING_RUNS = 16;
/** A second session of the model lives on the event loop's thread: only small model files are considered. */
const MAX_MODEL_BYTES = 16 * 1024 * 1024;
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
  let state: 'watching' | 'opening' | 'inline' | 'never' =
    maxMicros > 0 && data.ortProvider === 'cpu' ? 'watching' : 'never';
  /** The latest thread runs: how long each took, and its size. */
  const recent: { ms: number; elements: number }[] = [];
  let upTo = -1;
  let session: ort.InferenceSession | undefined;
  /** Whether each of the latest inline runs (up to MISS_WINDOW) missed, and how many of them did. */
  const misses: boolean[] = [];
  let missCount = 0;
  let inlineRuns = 0;
  /** Inline runs started and not finished: onnxruntime-node queues each one's native run for a later turn. */
  let inFlight = 0;
  let whenIdle: (() => void)[] = [];
  const limitMs = maxMicros / 1000;

  async function open(elements: number): Promise<void> {
    try {
      const { size } = await stat(data.modelPath);
      if (size > MAX_MODEL_BYTES || !isStraightLineGraph(await readFile(data.modelPath))) {
        state = 'never';
        return;
      }
      // One thread: intra-op workers would bring back the wake-ups this avoids.
      const opened = await createSession({ ...data, intraOpNumThreads: 1, interOpNumThreads: 1 });
      if (state !== 'opening') {
        await opened.release();
        return;
      }
      session = opened;
      upTo = elements;
      state = 'inline';
      logger.info(
        { model: meta.name, version: meta.version, elements, maxMicros },
        'small runs of this model take less than a thread hand-off: they run on the event loop',
      );
    } catch (err) {
      if (state === 'opening') state = 'never';
      logger.warn(
        { model: meta.name, version: meta.version, err },
        'inline session failed to open; runs stay on threads',
      );
    }
  }

  /** No new inline run starts; the session is freed once the runs already queued have run on it. */
  async function close(): Promise<void> {
    state = 'never';
    if (inFlight > 0) await new Promise<void>((resolve) => whenIdle.push(resolve));
    const s = session;
    session = undefined;
    await s?.release();
  }

  return {
    covers: (elements) => state === 'inline' && elements <= upTo,
    async run(inputs, fetches) {
      if (!session) throw new Error('inline run without a session');
      // Wall time of the run itself: a thread's CPU time is counted in scheduler ticks (4 ms), far coarser.
      const timing = { ms: 0 };
      inFlight += 1;
      let outputs: Tensor[];
      try {
        outputs = await runSession(session, data.modelName, inputs, fetches, timing);
      } finally {
        inFlight -= 1;
        if (inFlight === 0) {
          for (const resolve of whenIdle) resolve();
          whenIdle = [];
        }
      }
      const { ms } = timing;
      if (++inlineRuns <= WARM_UP_RUNS) return outputs;
      const missed = ms > limitMs * MISS_FACTOR;
      misses.push(missed);
      if (missed) missCount += 1;
      if (misses.length > MISS_WINDOW && misses.shift()) missCount -= 1;
      if (missCount >= MAX_MISSES && state === 'inline') {
        logger.warn(
          { model: meta.name, version: meta.version, ms: Math.round(ms * 1000) / 1000, maxMicros },
          'runs of this model on the event loop took too long: they go back to its threads',
        );
        close().catch((err: unknown) =>
          logger.warn({ model: meta.name, version: meta.version, err }, 'inline session failed to close'),
        );
      }
      return outputs;
    },
    observe(elements, ms) {
      if (state === 'inline') {
        if (ms <= limitMs) upTo = Math.max(upTo, elements);
        return undefined;
      }
      if (state !== 'watching') return undefined;
      recent.push({ ms, elements });
      if (recent.length > QUALIFYING_RUNS) recent.shift();
      if (recent.length < QUALIFYING_RUNS) return undefined;
      const times = recent.map((r) => r.ms).sort((a, b) => a - b);
      const median = times[QUALIFYING_RUNS / 2] ?? Number.POSITIVE_INFINITY;
      const slowest = times[QUALIFYING_RUNS - 1] ?? Number.POSITIVE_INFINITY;
      if (median > limitMs || slowest > limitMs * MISS_FACTOR) return undefined;
      state = 'opening';
      return open(Math.max(...recent.map((r) => r.elements)));
    },
    release: close,
  };
}
