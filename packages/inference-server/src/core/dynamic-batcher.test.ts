import type { DynamicBatchingConfig } from '@nvcf/models';
import { AppError, type Tensor, type TensorSpec } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import {
  type BatchableRequest,
  type BatchedAnswer,
  type BatcherClock,
  DynamicBatcher,
  type ExecutionReport,
  QueueRejection,
} from './dynamic-batcher.ts';
import { InstanceSlots } from './instance-slots.ts';

/** Time that moves only when the test says, with the timers it has scheduled. */
class ManualClock implements BatcherClock {
  #t = 0n;
  readonly #timers: { at: bigint; fn: () => void; live: boolean }[] = [];
  now = () => this.#t;
  schedule = (fn: () => void, ms: number) => {
    const timer = { at: this.#t + BigInt(ms) * 1_000_000n, fn, live: true };
    this.#timers.push(timer);
    return () => {
      timer.live = false;
    };
  };
  get liveTimers(): number {
    return this.#timers.filter((t) => t.live).length;
  }
  /** Moves time on by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const end = this.#t + BigInt(ms) * 1_000_000n;
    for (;;) {
      const due = this.#timers.filter((t) => t.live && t.at <= end).sort((a, b) => Number(a.at - b.at))[0];
      if (!due) break;
      due.live = false;
      this.#t = due.at;
      due.fn();
    }
    this.#t = end;
  }
}

/** A model whose runs the test finishes: Y = 2·X, row by row. */
function fakeModel() {
  const calls: {
    inputs: Tensor[];
    outputNames: string[] | undefined;
    finish: (outputs?: Tensor[]) => void;
    fail: (err: unknown) => void;
  }[] = [];
  const run = (inputs: Tensor[], outputNames?: string[]) =>
    new Promise<Tensor[]>((resolve, reject) => {
      const x = inputs[0] as Tensor;
      const doubled: Tensor = { ...x, name: 'Y', data: (x.data as Float32Array).map((v) => v * 2) };
      calls.push({ inputs, outputNames, finish: (outputs) => resolve(outputs ?? [doubled]), fail: reject });
    });
  return { calls, run };
}

const specs: TensorSpec[] = [{ name: 'X', datatype: 'FP32', shape: [-1, -1] }];
/** `rows` rows of `width` values starting at `from`. */
const request = (rows: number, from: number, width = 1, extra: Partial<BatchableRequest> = {}): BatchableRequest => ({
  inputs: [
    {
      name: 'X',
      datatype: 'FP32',
      shape: [rows, width],
      data: Float32Array.from({ length: rows * width }, (_, i) => from + i),
    },
  ],
  rows,
  ...extra,
});
const config = (c: Partial<DynamicBatchingConfig> = {}): DynamicBatchingConfig => ({
  preferred_batch_size: [],
  max_queue_delay_microseconds: 0,
  preserve_ordering: false,
  priority_levels: 0,
  default_priority_level: 0,
  ...c,
});
const tick = () => new Promise((resolve) => setImmediate(resolve));
const values = (a: BatchedAnswer) => Array.from(a.outputs[0]?.data as Float32Array);
const rowsOf = (call: { inputs: Tensor[] } | undefined) => call?.inputs[0]?.shape[0];
const settle = <T>(p: Promise<T>) => {
  const s: { value?: T; error?: unknown; done: boolean } = { done: false };
  p.then(
    (value) => Object.assign(s, { value, done: true }),
    (error) => Object.assign(s, { error, done: true }),
  );
  return s;
};
const errorOf = (s: { error?: unknown }) =>
  s.error instanceof AppError ? `${s.error.code}: ${s.error.message}` : String(s.error);

function setup(o: { config?: Partial<DynamicBatchingConfig>; maxBatchSize?: number; instances?: number } = {}) {
  const clock = new ManualClock();
  const model = fakeModel();
  const slots = new InstanceSlots(o.instances ?? 1);
  const executions: ExecutionReport[] = [];
  const batcher = new DynamicBatcher({
    maxBatchSize: o.maxBatchSize ?? 8,
    config: config(o.config),
    inputs: specs,
    slots,
    run: model.run,
    onExecution: (e) => executions.push(e),
    clock,
  });
  return { clock, model, slots, batcher, executions };
}

describe('DynamicBatcher', () => {
  it('merges the requests that queue while the instance is busy into one execution, each getting its own rows', async () => {
    const { model, batcher, executions } = setup();
    const first = batcher.submit(request(1, 100));
    await tick();
    expect(model.calls).toHaveLength(1);
    const queued = [request(1, 0), request(2, 10), request(1, 20), request(3, 30)].map((r) => batcher.submit(r));
    await tick();
    expect(model.calls).toHaveLength(1);
    model.calls[0]?.finish();
    expect(values(await first)).toEqual([200]);
    await tick();
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]?.inputs[0]?.shape).toEqual([7, 1]);
    model.calls[1]?.finish();
    const answers = await Promise.all(queued);
    expect(answers.map(values)).toEqual([[0], [20, 22], [40], [60, 62, 64]]);
    expect(answers.map((a) => [a.batchSize, a.outputs[0]?.shape])).toEqual([
      [7, [1, 1]],
      [7, [2, 1]],
      [7, [1, 1]],
      [7, [3, 1]],
    ]);
    expect(executions.map((e) => [e.batchSize, e.requests, e.ok])).toEqual([
      [1, 1, true],
      [7, 4, true],
    ]);
  });

  it('tells each request of a merged execution the spans of the others it ran with (tracing’s batch links)', async () => {
    const { model, batcher } = setup();
    const span = (n: number) => ({ traceId: String(n).repeat(32), spanId: String(n).repeat(16), traceFlags: 1 });
    const busy = batcher.submit(request(1, 100, 1, { span: span(1) }));
    await tick();
    // Queued behind it, merged into one execution: two with a span, one without.
    const merged = [request(1, 0, 1, { span: span(2) }), request(1, 1, 1, { span: span(3) }), request(1, 2)].map((r) =>
      batcher.submit(r),
    );
    model.calls[0]?.finish();
    // Alone in its execution: no peers.
    expect(await busy).not.toHaveProperty('peers');
    await tick();
    model.calls[1]?.finish();
    const [a, b, c] = await Promise.all(merged);
    expect(a?.peers).toEqual([span(3)]);
    expect(b?.peers).toEqual([span(2)]);
    expect(c?.peers).toEqual([span(2), span(3)]);
  });

  it('waits up to max_queue_delay for a batch to fill, and leaves at once when it reaches the size', async () => {
    const { clock, model, batcher } = setup({ maxBatchSize: 4, config: { max_queue_delay_microseconds: 10_000 } });
    const a = batcher.submit(request(1, 0));
    await tick();
    clock.advance(9);
    const b = batcher.submit(request(1, 1));
    await tick();
    expect(model.calls).toHaveLength(0);
    // One timer for the queue, not one per request.
    expect(clock.liveTimers).toBe(1);
    clock.advance(1);
    await tick();
    expect(rowsOf(model.calls[0])).toBe(2);
    model.calls[0]?.finish();
    const [answerA, answerB] = await Promise.all([a, b]);
    // Queue time runs from each submit to the dispatch.
    expect([answerA.queueNs, answerB.queueNs]).toEqual([10_000_000, 1_000_000]);

    const full = [request(2, 0), request(2, 2)].map((r) => batcher.submit(r));
    await tick();
    expect(rowsOf(model.calls[1])).toBe(4);
    model.calls[1]?.finish();
    expect((await Promise.all(full)).map((x) => x.queueNs)).toEqual([0, 0]);
    expect(clock.liveTimers).toBe(0);
  });

  it('cuts a batch to the largest preferred size the queue head forms, and sends the rest next', async () => {
    const { model, batcher } = setup({ config: { preferred_batch_size: [2, 4] } });
    const busy = batcher.submit(request(8, 0));
    await tick();
    const queued = [0, 1, 2, 3, 4].map((i) => batcher.submit(request(1, i)));
    model.calls[0]?.finish();
    await busy;
    await tick();
    expect(rowsOf(model.calls[1])).toBe(4);
    model.calls[1]?.finish();
    await tick();
    expect(rowsOf(model.calls[2])).toBe(1);
    model.calls[2]?.finish();
    expect((await Promise.all(queued)).map(values)).toEqual([[0], [2], [4], [6], [8]]);
  });

  it('merges only compatible requests; the oldest always goes in the next batch', async () => {
    const { model, batcher } = setup();
    const busy = batcher.submit(request(8, 0));
    await tick();
    const narrow1 = batcher.submit(request(1, 1, 2));
    const wide = batcher.submit(request(1, 2, 3));
    const narrow2 = batcher.submit(request(1, 3, 2));
    const named = batcher.submit(request(1, 4, 2, { outputNames: ['Y'] }));
    model.calls[0]?.finish();
    await busy;
    const shapes: unknown[] = [];
    for (let i = 1; i <= 3; i++) {
      await tick();
      shapes.push([model.calls[i]?.inputs[0]?.shape, model.calls[i]?.outputNames]);
      model.calls[i]?.finish();
    }
    expect(shapes).toEqual([
      [[2, 2], undefined],
      [[1, 3], undefined],
      [[1, 2], ['Y']],
    ]);
    expect((await Promise.all([narrow1, wide, narrow2, named])).map(values)).toEqual([
      [2, 4],
      [4, 6, 8],
      [6, 8],
      [8, 10],
    ]);
  });

  it('runs one batch per free instance', async () => {
    const { model, batcher } = setup({ instances: 2 });
    const a = batcher.submit(request(1, 0));
    await tick();
    const b = batcher.submit(request(1, 1));
    await tick();
    expect(model.calls).toHaveLength(2);
    const rest = [batcher.submit(request(1, 2)), batcher.submit(request(1, 3))];
    await tick();
    expect(model.calls).toHaveLength(2);
    model.calls[1]?.finish();
    await b;
    await tick();
    expect(rowsOf(model.calls[2])).toBe(2);
    model.calls[0]?.finish();
    model.calls[2]?.finish();
    expect((await Promise.all([a, ...rest])).map(values)).toEqual([[0], [4], [6]]);
  });

  it('with preserve_ordering, answers in submit order even when a later batch finishes first', async () => {
    for (const preserve of [true, false]) {
      const { model, batcher } = setup({ instances: 2, config: { preserve_ordering: preserve } });
      const order: string[] = [];
      const a = batcher.submit(request(1, 0)).then(() => order.push('a'));
      await tick();
      const b = batcher.submit(request(1, 1)).then(() => order.push('b'));
      await tick();
      model.calls[1]?.finish();
      await tick();
      expect(order).toEqual(preserve ? [] : ['b']);
      model.calls[0]?.finish();
      await Promise.all([a, b]);
      expect(order).toEqual(preserve ? ['a', 'b'] : ['b', 'a']);
    }
  });

  it('rejects a submit beyond max_queue_size at once', async () => {
    const { model, batcher } = setup({
      config: {
        default_queue_policy: {
          timeout_action: 'REJECT',
          default_timeout_microseconds: 0,
          allow_timeout_override: false,
          max_queue_size: 2,
        },
      },
    });
    const busy = batcher.submit(request(8, 0));
    await tick();
    const queued = [batcher.submit(request(1, 1)), batcher.submit(request(1, 2))];
    const refused = settle(batcher.submit(request(1, 3)));
    await tick();
    expect(refused.error).toBeInstanceOf(QueueRejection);
    expect(errorOf(refused)).toBe('UNAVAILABLE: Exceeds maximum queue size');
    model.calls[0]?.finish();
    await busy;
    await tick();
    model.calls[1]?.finish();
    expect((await Promise.all(queued)).map(values)).toEqual([[2], [4]]);
  });

  it('rejects a request still queued after its timeout (REJECT), the request timeout when overrides are allowed', async () => {
    const policy = {
      timeout_action: 'REJECT' as const,
      default_timeout_microseconds: 5_000,
      allow_timeout_override: true,
      max_queue_size: 0,
    };
    const { clock, model, batcher } = setup({ config: { default_queue_policy: policy } });
    const busy = batcher.submit(request(8, 0));
    await tick();
    const byDefault = settle(batcher.submit(request(1, 1)));
    const longer = settle(batcher.submit(request(1, 2, 1, { timeoutUs: 20_000 })));
    clock.advance(5);
    await tick();
    expect(errorOf(byDefault)).toBe('UNAVAILABLE: Request timeout expired');
    expect(longer.done).toBe(false);
    clock.advance(15);
    await tick();
    expect(errorOf(longer)).toBe('UNAVAILABLE: Request timeout expired');
    model.calls[0]?.finish();
    await busy;
    await tick();
    expect(model.calls).toHaveLength(1);

    // Without allow_timeout_override the request's own timeout is ignored.
    const strict = setup({ config: { default_queue_policy: { ...policy, allow_timeout_override: false } } });
    const busy2 = strict.batcher.submit(request(8, 0));
    await tick();
    const ignored = settle(strict.batcher.submit(request(1, 1, 1, { timeoutUs: 1_000 })));
    strict.clock.advance(1);
    await tick();
    expect(ignored.done).toBe(false);
    strict.clock.advance(4);
    await tick();
    expect(errorOf(ignored)).toBe('UNAVAILABLE: Request timeout expired');
    strict.model.calls[0]?.finish();
    await busy2;
  });

  it('keeps a timed-out request queued behind the others with the DELAY action', async () => {
    const { clock, model, batcher } = setup({
      config: {
        default_queue_policy: {
          timeout_action: 'DELAY',
          default_timeout_microseconds: 1_000,
          allow_timeout_override: false,
          max_queue_size: 0,
        },
      },
    });
    const busy = batcher.submit(request(8, 0));
    await tick();
    const late = batcher.submit(request(1, 1, 2));
    clock.advance(1);
    const fresh = batcher.submit(request(1, 2, 3));
    model.calls[0]?.finish();
    await busy;
    await tick();
    expect(model.calls[1]?.inputs[0]?.shape).toEqual([1, 3]);
    model.calls[1]?.finish();
    await tick();
    expect(model.calls[2]?.inputs[0]?.shape).toEqual([1, 2]);
    model.calls[2]?.finish();
    expect((await Promise.all([late, fresh])).map(values)).toEqual([
      [2, 4],
      [4, 6, 8],
    ]);
  });

  it('drops a request whose signal aborts while queued, and refuses one aborted already', async () => {
    const { model, batcher } = setup();
    const busy = batcher.submit(request(8, 0));
    await tick();
    const controller = new AbortController();
    const leaving = settle(batcher.submit(request(1, 1, 1, { signal: controller.signal })));
    const staying = batcher.submit(request(1, 2));
    controller.abort();
    await tick();
    expect(errorOf(leaving)).toBe('CANCELLED: request cancelled before it ran');
    expect(batcher.queued).toBe(1);
    const early = settle(batcher.submit(request(1, 3, 1, { signal: AbortSignal.abort() })));
    await tick();
    expect(errorOf(early)).toMatch(/^CANCELLED/);
    model.calls[0]?.finish();
    await busy;
    await tick();
    expect(rowsOf(model.calls[1])).toBe(1);
    model.calls[1]?.finish();
    expect(values(await staying)).toEqual([4]);
  });

  it('fails only the requests of a failed batch, each with the model error', async () => {
    const { model, batcher, executions } = setup();
    const busy = batcher.submit(request(8, 0));
    await tick();
    const doomed = [settle(batcher.submit(request(1, 1))), settle(batcher.submit(request(1, 2)))];
    const other = batcher.submit(request(1, 3, 2));
    model.calls[0]?.finish();
    await busy;
    await tick();
    const modelError = new AppError('INVALID_ARGUMENT', 'the model refused');
    model.calls[1]?.fail(modelError);
    await tick();
    expect(doomed.map((d) => d.error)).toEqual([modelError, modelError]);
    model.calls[2]?.finish();
    expect(values(await other)).toEqual([6, 8]);
    expect(executions.map((e) => e.ok)).toEqual([true, false, true]);
  });

  it('fails a batch whose output is not batch-major over its rows', async () => {
    const { model, batcher } = setup();
    const busy = batcher.submit(request(8, 0));
    await tick();
    const pair = [settle(batcher.submit(request(1, 1))), settle(batcher.submit(request(2, 2)))];
    model.calls[0]?.finish();
    await busy;
    await tick();
    model.calls[1]?.finish([{ name: 'Y', datatype: 'FP32', shape: [1, 1], data: new Float32Array(1) }]);
    await tick();
    expect(pair.map(errorOf)).toEqual([
      "INTERNAL: model output 'Y' has shape [1,1], not batch-major over the batch's 3 rows",
      "INTERNAL: model output 'Y' has shape [1,1], not batch-major over the batch's 3 rows",
    ]);
  });

  it('times each phase of the execution a request ran in', async () => {
    const { clock, model, batcher } = setup({ config: { max_queue_delay_microseconds: 2_000 } });
    const answer = batcher.submit(request(1, 0));
    await tick();
    clock.advance(2);
    await tick();
    clock.advance(3);
    model.calls[0]?.finish();
    expect(await answer).toMatchObject({ queueNs: 2_000_000, computeInputNs: 0, computeInferNs: 3_000_000 });
  });

  it('close() rejects what is queued, lets running batches finish and frees the instance', async () => {
    const { model, slots, batcher } = setup({ config: { max_queue_delay_microseconds: 60_000_000 } });
    const running = batcher.submit(request(8, 0));
    await tick();
    const queued = settle(batcher.submit(request(1, 1)));
    batcher.close("model 'm' version 1 is unloaded");
    await tick();
    expect(errorOf(queued)).toBe("UNAVAILABLE: model 'm' version 1 is unloaded");
    const after = settle(batcher.submit(request(1, 2)));
    await tick();
    expect(errorOf(after)).toBe("UNAVAILABLE: model 'm' version 1 is unloaded");
    model.calls[0]?.finish();
    expect(values(await running)).toHaveLength(8);
    await slots.acquire();
    expect(model.calls).toHaveLength(1);
  });

  it('drain() runs what is queued without waiting for the delay, and refuses new requests', async () => {
    const { model, batcher, clock } = setup({ config: { max_queue_delay_microseconds: 60_000_000 } });
    const waiting = batcher.submit(request(1, 5));
    await tick();
    expect(model.calls).toHaveLength(0);
    batcher.drain();
    await tick();
    expect(model.calls).toHaveLength(1);
    const refused = settle(batcher.submit(request(1, 1)));
    await tick();
    expect(refused.error).toBeInstanceOf(QueueRejection);
    model.calls[0]?.finish();
    expect(values(await waiting)).toEqual([10]);
    expect(clock.liveTimers).toBe(0);
  });
});
