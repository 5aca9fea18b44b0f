import type { DynamicBatchingConfig } from '@nvcf/models';
import { AppError, type Tensor, type TensorSpec } from '@nvcf/protocol';
import type { SpanContext } from '@opentelemetry/api';
import { batchKey, concatRequests, splitOutputs } from './batch-tensors.ts';
import type { InstanceSlots } from './instance-slots.ts';

export interface BatchableRequest {
  inputs: Tensor[];
  /** Absent (or empty): every output, in the model's order. */
  outputNames?: string[];
  /** The request's batch size: dim 0 of each of its inputs. */
  rows: number;
  /** Triton's `timeout` request parameter, used when the queue policy allows the override. */
  timeoutUs?: number;
  signal?: AbortSignal;
  /** The caller gives the inputs' buffers away (CoreInferRequest.inputsOwned). */
  owned?: boolean;
  /** The request's span (tracing on): the other requests of its execution link to it (`BatchedAnswer.peers`). */
  span?: SpanContext;
}

/** Durations, in nanoseconds, of one model execution's phases. */
export interface ComputeTimes {
  /** Joining the requests' inputs. */
  computeInputNs: number;
  computeInferNs: number;
  /** Cutting the outputs back into requests. */
  computeOutputNs: number;
}

export interface BatchedAnswer extends ComputeTimes {
  outputs: Tensor[];
  /** Rows of the execution the request ran in. */
  batchSize: number;
  /** From submit to the batch's dispatch on an instance. */
  queueNs: number;
  /** The spans of the other requests this one ran with, when they carried one (BatchableRequest.span). */
  peers?: SpanContext[];
}

export interface ExecutionReport extends ComputeTimes {
  batchSize: number;
  requests: number;
  ok: boolean;
}

/** A monotonic clock in nanoseconds and one-shot timers; tests pass a manual one. */
export interface BatcherClock {
  now(): bigint;
  /** Calls `fn` once after `ms`; returns what cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

const systemClock: BatcherClock = {
  now: () => process.hrtime.bigint(),
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** The scheduler turned the request away (queue full, timeout, closed): Triton's REJECTED failures. */
export class QueueRejection extends AppError {
  constructor(message: string) {
    super('UNAVAILABLE', message);
  }
}

export interface DynamicBatcherOptions {
  maxBatchSize: number;
  config: DynamicBatchingConfig;
  /** The model's inputs, batch dimension included: a request that does not fit them runs alone. */
  inputs: readonly TensorSpec[];
  /** The version's instances: each batch holds one while it runs. */
  slots: InstanceSlots;
  /** `owned`: the inputs were joined here, so their buffers may be moved to the instance's thread. */
  run: (inputs: Tensor[], outputNames: string[] | undefined, owned: boolean) => Promise<Tensor[]>;
  /** Once per execution, before its requests are answered. */
  onExecution?: (e: ExecutionReport) => void;
  clock?: BatcherClock;
}

interface Entry {
  request: BatchableRequest;
  /** Requests merge only with the same key; undefined runs alone. */
  key: string | undefined;
  submitted: bigint;
  deadline: bigint | undefined;
  resolve: (answer: BatchedAnswer) => void;
  reject: (err: unknown) => void;
  onAbort?: () => void;
  /** preserve_ordering: the outcome, held until every earlier request has its own. */
  deliver?: () => void;
}

/** The spans of the batch's other requests: one execution's members, linked to each other. */
function peerSpans(batch: Entry[], self: Entry): SpanContext[] {
  return batch.flatMap((e) => (e !== self && e.request.span ? [e.request.span] : []));
}

/** setTimeout's ceiling; a longer delay is waited in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const ns = (from: bigint, to: bigint) => Number(to - from);

/**
 * Triton's dynamic batcher for one model version (Triton "Batchers" and model configuration docs): requests
 * queue; whenever an instance is free, the oldest request and the compatible ones after it (same inputs,
 * datatypes, non-batch dims and outputs) are joined along dim 0, up to `maxBatchSize` rows, run once, and
 * the outputs are cut back so that each request gets its own rows. A batch leaves when it reaches the
 * largest preferred size, when its oldest request has waited `max_queue_delay_microseconds`, or at once when
 * that delay is 0; it is cut to a preferred size when one can be formed. One timer serves the whole queue.
 *
 * @example
 * const batcher = new DynamicBatcher({ maxBatchSize: 8, config, inputs: model.inputs, slots, run: model.run });
 * const { outputs } = await batcher.submit({ inputs, rows: 1 });
 */
export class DynamicBatcher {
  readonly #o: DynamicBatcherOptions;
  readonly #clock: BatcherClock;
  readonly #max: number;
  readonly #preferred: Set<number>;
  /** Rows at which a batch leaves without waiting: the largest preferred size, or the maximum. */
  readonly #target: number;
  readonly #delayNs: bigint;
  #queue: Entry[] = [];
  /** Requests past their timeout under the DELAY action: served after every other queued request. */
  #delayed: Entry[] = [];
  /** preserve_ordering: every request not answered yet, in submit order. */
  readonly #unanswered = new Set<Entry>();
  #acquiring = false;
  /** An instance slot taken and not yet given to a batch (waiting for the batch to fill). */
  #holding = false;
  #closedWith: string | undefined;
  #draining = false;
  #cancelTimer: (() => void) | undefined;
  #timerAt: bigint | undefined;

  constructor(o: DynamicBatcherOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#max = Math.max(1, o.maxBatchSize);
    const preferred = o.config.preferred_batch_size.filter((s) => s >= 1 && s <= this.#max);
    this.#preferred = new Set(preferred);
    this.#target = preferred.length > 0 ? Math.max(...preferred) : this.#max;
    const delayUs = o.config.max_queue_delay_microseconds;
    this.#delayNs = Number.isFinite(delayUs) && delayUs > 0 ? BigInt(Math.trunc(delayUs)) * 1000n : 0n;
  }

  /** Requests waiting for a batch. */
  get queued(): number {
    return this.#queue.length + this.#delayed.length;
  }

  submit(request: BatchableRequest): Promise<BatchedAnswer> {
    if (this.#closedWith !== undefined) return Promise.reject(new QueueRejection(this.#closedWith));
    if (this.#draining) return Promise.reject(new QueueRejection('the model version is being replaced'));
    if (request.signal?.aborted) return Promise.reject(cancelled());
    const maxQueue = this.#o.config.default_queue_policy?.max_queue_size ?? 0;
    if (maxQueue > 0 && this.queued >= maxQueue) {
      return Promise.reject(new QueueRejection('Exceeds maximum queue size'));
    }
    const submitted = this.#clock.now();
    return new Promise<BatchedAnswer>((resolve, reject) => {
      const entry: Entry = {
        request,
        key: batchKey(request.inputs, request.rows, request.outputNames, this.#o.inputs),
        submitted,
        deadline: this.#deadline(request, submitted),
        resolve,
        reject,
      };
      if (request.signal) {
        const onAbort = () => this.#cancel(entry);
        entry.onAbort = onAbort;
        request.signal.addEventListener('abort', onAbort, { once: true });
      }
      this.#queue.push(entry);
      if (this.#o.config.preserve_ordering) this.#unanswered.add(entry);
      this.#pump();
    });
  }

  /** Refuses new requests and runs those queued without waiting for the delay (a reload's old batcher). */
  drain(): void {
    this.#draining = true;
    this.#pump();
  }

  /** Refuses new requests and rejects those queued with UNAVAILABLE; batches already running finish. */
  close(message = 'the model version is unloaded'): void {
    this.#closedWith = message;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#timerAt = undefined;
    const queued = [...this.#queue, ...this.#delayed];
    this.#queue = [];
    this.#delayed = [];
    for (const e of queued) this.#drop(e, new QueueRejection(message));
    if (this.#holding) {
      this.#holding = false;
      this.#o.slots.release();
    }
  }

  #deadline(request: BatchableRequest, submitted: bigint): bigint | undefined {
    const policy = this.#o.config.default_queue_policy;
    if (!policy) return undefined;
    const override = policy.allow_timeout_override && request.timeoutUs !== undefined && request.timeoutUs > 0;
    const us = override ? (request.timeoutUs ?? 0) : policy.default_timeout_microseconds;
    return Number.isFinite(us) && us > 0 ? submitted + BigInt(Math.trunc(us)) * 1000n : undefined;
  }

  /** Takes an instance slot when requests wait, or forms a batch on the one held. */
  #pump(): void {
    if (this.#holding) {
      this.#tryDispatch();
      return;
    }
    if (!this.#acquiring && this.#closedWith === undefined && this.queued > 0) {
      this.#acquiring = true;
      void this.#o.slots.acquire().then(() => {
        this.#acquiring = false;
        this.#holding = true;
        this.#tryDispatch();
      });
    }
    this.#arm();
  }

  #tryDispatch(): void {
    const now = this.#clock.now();
    this.#expire(now);
    if (this.#closedWith !== undefined || this.queued === 0) {
      if (this.#holding) {
        this.#holding = false;
        this.#o.slots.release();
      }
      this.#arm();
      return;
    }
    const batch = this.#form(now);
    if (!batch) {
      this.#arm();
      return;
    }
    this.#holding = false;
    void this.#execute(batch, now);
    this.#pump();
  }

  /** The next batch when it should leave now, else undefined (wait for more requests or the delay). */
  #form(now: bigint): Entry[] | undefined {
    const candidates = [...this.#queue, ...this.#delayed];
    const head = candidates[0];
    if (!head) return undefined;
    if (head.key === undefined) return [head];
    const picked = [head];
    let rows = head.request.rows;
    for (const e of candidates.slice(1)) {
      if (rows >= this.#max) break;
      if (e.key === head.key && rows + e.request.rows <= this.#max) {
        picked.push(e);
        rows += e.request.rows;
      }
    }
    const ready =
      this.#draining || this.#delayNs === 0n || rows >= this.#target || now - head.submitted >= this.#delayNs;
    if (!ready) return undefined;
    // Triton's rule: the largest preferred size that the queue head forms exactly, else all that fit.
    let sum = 0;
    let cut = picked.length;
    let found = false;
    picked.forEach((e, i) => {
      sum += e.request.rows;
      if (this.#preferred.has(sum)) {
        cut = i + 1;
        found = true;
      }
    });
    return found ? picked.slice(0, cut) : picked;
  }

  async #execute(batch: Entry[], dispatched: bigint): Promise<void> {
    const taken = new Set(batch);
    this.#queue = this.#queue.filter((e) => !taken.has(e));
    this.#delayed = this.#delayed.filter((e) => !taken.has(e));
    for (const e of batch) this.#detach(e);
    const rows = batch.map((e) => e.request.rows);
    const batchSize = rows.reduce((a, b) => a + b, 0);
    const first = batch[0] as Entry;
    let joined = dispatched;
    let ran = dispatched;
    let parts: Tensor[][] | undefined;
    let error: unknown;
    try {
      // One request runs as it came: nothing to join, and its outputs need not be batch-major.
      const inputs = batch.length === 1 ? first.request.inputs : concatRequests(batch.map((e) => e.request.inputs));
      joined = this.#clock.now();
      const outputs = await this.#o.run(
        inputs,
        first.request.outputNames,
        batch.length > 1 || first.request.owned === true,
      );
      ran = this.#clock.now();
      parts = batch.length === 1 ? [outputs] : splitOutputs(outputs, rows);
    } catch (err) {
      if (ran === dispatched) ran = this.#clock.now();
      error = err;
    } finally {
      this.#o.slots.release();
    }
    const done = this.#clock.now();
    const times: ComputeTimes = {
      computeInputNs: ns(dispatched, joined),
      computeInferNs: ns(joined, ran),
      computeOutputNs: ns(ran, done),
    };
    this.#o.onExecution?.({ batchSize, requests: batch.length, ...times, ok: parts !== undefined });
    batch.forEach((e, i) => {
      const outputs = parts?.[i];
      const peers = batch.length > 1 ? peerSpans(batch, e) : [];
      this.#answer(
        e,
        outputs
          ? () =>
              e.resolve({
                outputs,
                batchSize,
                queueNs: ns(e.submitted, dispatched),
                ...times,
                ...(peers.length > 0 ? { peers } : {}),
              })
          : () => e.reject(error),
      );
    });
    this.#pump();
  }

  /** Requests past their timeout: rejected (REJECT) or moved behind every other request (DELAY). */
  #expire(now: bigint): void {
    if (!this.#queue.some((e) => e.deadline !== undefined && e.deadline <= now)) return;
    const expired = this.#queue.filter((e) => e.deadline !== undefined && e.deadline <= now);
    this.#queue = this.#queue.filter((e) => !expired.includes(e));
    const delay = this.#o.config.default_queue_policy?.timeout_action === 'DELAY';
    for (const e of expired) {
      if (delay) {
        e.deadline = undefined;
        this.#delayed.push(e);
      } else {
        this.#detach(e);
        this.#drop(e, new QueueRejection('Request timeout expired'));
      }
    }
  }

  #cancel(entry: Entry): void {
    const before = this.queued;
    this.#queue = this.#queue.filter((e) => e !== entry);
    this.#delayed = this.#delayed.filter((e) => e !== entry);
    if (this.queued === before) return;
    this.#drop(entry, cancelled());
    this.#pump();
  }

  /** One timer for the whole queue: the head's delay while a slot waits for it, and the nearest timeout. */
  #arm(): void {
    let at: bigint | undefined;
    const head = this.#queue[0] ?? this.#delayed[0];
    if (this.#holding && head && this.#delayNs > 0n) at = head.submitted + this.#delayNs;
    // Only a queue policy gives requests timeouts; without one, a burst need not be scanned on every submit.
    if (this.#o.config.default_queue_policy) {
      for (const e of this.#queue) {
        if (e.deadline !== undefined && (at === undefined || e.deadline < at)) at = e.deadline;
      }
    }
    if (at === this.#timerAt) return;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#timerAt = at;
    if (at === undefined) return;
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(ns(this.#clock.now(), at) / 1e6)));
    this.#cancelTimer = this.#clock.schedule(() => {
      this.#cancelTimer = undefined;
      this.#timerAt = undefined;
      this.#expire(this.#clock.now());
      this.#pump();
    }, ms);
  }

  #detach(e: Entry): void {
    if (e.onAbort) e.request.signal?.removeEventListener('abort', e.onAbort);
  }

  /** Answers a request that leaves the queue without running: at once, whatever the ordering. */
  #drop(e: Entry, err: AppError): void {
    this.#detach(e);
    this.#unanswered.delete(e);
    e.reject(err);
    this.#flush();
  }

  #answer(e: Entry, deliver: () => void): void {
    if (this.#o.config.preserve_ordering) {
      e.deliver = deliver;
      this.#flush();
    } else {
      deliver();
    }
  }

  /** preserve_ordering: delivers settled requests up to the first that is still waiting. */
  #flush(): void {
    for (const e of this.#unanswered) {
      if (!e.deliver) return;
      this.#unanswered.delete(e);
      e.deliver();
    }
  }
}

function cancelled(): AppError {
  return new AppError('CANCELLED', 'request cancelled before it ran');
}
