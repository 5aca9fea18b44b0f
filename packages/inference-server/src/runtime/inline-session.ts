import { readFile, stat } from 'node:fs/promises';
import { isStraightLineGraph } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import type * as ort from 'onnxruntime-node';
import type { InlineRunsLogger } from './inline-runs.ts';
import { createSession, runSession } from './session-run.ts';
import type { InstanceThreadData } from './thread-messages.ts';

/** A second session of the model lives on the event loop's thread: only small model files are considered. */
const MAX_MODEL_BYTES = 16 * 1024 * 1024;

type InlineState = 'watching' | 'opening' | 'inline' | 'never';

/**
 * The model's session on the event loop's thread and where it stands: watched for qualifying runs, opening,
 * running runs of up to `upTo` input elements inline, or never (again) inline.
 */
export class InlineSession {
  readonly #data: InstanceThreadData;
  readonly #logger: InlineRunsLogger;
  readonly #meta: { name: string; version: string };
  readonly #maxMicros: number;
  #state: InlineState;
  #session: ort.InferenceSession | undefined;
  #upTo = -1;
  /** Inline runs started and not finished: onnxruntime-node queues each one's native run for a later turn. */
  #inFlight = 0;
  #whenIdle: (() => void)[] = [];

  constructor(
    data: InstanceThreadData,
    maxMicros: number,
    logger: InlineRunsLogger,
    meta: { name: string; version: string },
  ) {
    this.#data = data;
    this.#maxMicros = maxMicros;
    this.#logger = logger;
    this.#meta = meta;
    this.#state = maxMicros > 0 && data.ortProvider === 'cpu' ? 'watching' : 'never';
  }

  get state(): InlineState {
    return this.#state;
  }

  covers(elements: number): boolean {
    return this.#state === 'inline' && elements <= this.#upTo;
  }

  /** Runs of up to `elements` input elements go inline too. */
  widen(elements: number): void {
    this.#upTo = Math.max(this.#upTo, elements);
  }

  /** Opens the session; runs of up to `elements` input elements go inline once it is open. */
  open(elements: number): Promise<void> {
    this.#state = 'opening';
    return this.#open(elements);
  }

  async run(inputs: Tensor[], fetches: string[], timing: { ms: number }): Promise<Tensor[]> {
    if (!this.#session) throw new Error('inline run without a session');
    this.#inFlight += 1;
    try {
      return await runSession(this.#session, this.#data.modelName, inputs, fetches, timing);
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) {
        for (const resolve of this.#whenIdle) resolve();
        this.#whenIdle = [];
      }
    }
  }

  /** No new inline run starts; the session is freed once the runs already queued have run on it. */
  async close(): Promise<void> {
    this.#state = 'never';
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#whenIdle.push(resolve));
    const s = this.#session;
    this.#session = undefined;
    await s?.release();
  }

  async #open(elements: number): Promise<void> {
    const data = this.#data;
    const { name: model, version } = this.#meta;
    try {
      const { size } = await stat(data.modelPath);
      if (size > MAX_MODEL_BYTES || !isStraightLineGraph(await readFile(data.modelPath))) {
        this.#state = 'never';
        return;
      }
      // One thread: intra-op workers would bring back the wake-ups this avoids.
      const opened = await createSession({ ...data, intraOpNumThreads: 1, interOpNumThreads: 1 });
      if (this.#state !== 'opening') {
        await opened.release();
        return;
      }
      this.#session = opened;
      this.#upTo = elements;
      this.#state = 'inline';
      this.#logger.info(
        { model, version, elements, maxMicros: this.#maxMicros },
        'small runs of this model take less than a thread hand-off: they run on the event loop',
      );
    } catch (err) {
      if (this.#state === 'opening') this.#state = 'never';
      this.#logger.warn({ model, version, err }, 'inline session failed to open; runs stay on threads');
    }
  }
}
