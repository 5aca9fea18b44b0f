import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { BatchedAnswer } from './dynamic-batcher.ts';
import { traceDecoupledRun, traceRun } from './run-span.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('test');

afterEach(() => exporter.reset());
afterAll(() => provider.shutdown());

const answer = (batchSize: number): BatchedAnswer => ({
  outputs: [],
  batchSize,
  queueNs: 2_000_000,
  computeInputNs: 0,
  computeInferNs: 3_000_000,
  computeOutputNs: 0,
});
const facts = { model: 'simple', version: '1', rows: 1, batched: true };

describe('session.run span', () => {
  it('records the model, the request’s rows and the execution it joined', async () => {
    const ran = await traceRun(tracer, facts, async () => answer(3));
    expect(ran.batchSize).toBe(3);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('session.run');
    expect(span?.attributes).toMatchObject({
      'nvcf.model.name': 'simple',
      'nvcf.model.version': '1',
      'nvcf.request.rows': 1,
      'nvcf.batch.dynamic': true,
      'nvcf.batch.size': 3,
      'nvcf.batch.merged': true,
      'nvcf.batch.queue_ms': 2,
      'nvcf.compute.infer_ms': 3,
    });
  });

  it('links the spans of the requests it ran with, and hands the batcher its own', async () => {
    const peer = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
    let own: string | undefined;
    await traceRun(tracer, facts, async (span) => {
      own = span?.spanId;
      return { ...answer(2), peers: [peer] };
    });
    const [span] = exporter.getFinishedSpans();
    expect(own).toBe(span?.spanContext().spanId);
    expect(span?.links.map((l) => l.context)).toEqual([peer]);
  });

  it('marks a failed run as an error and passes the failure on', async () => {
    await expect(traceRun(tracer, facts, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const [span] = exporter.getFinishedSpans();
    expect(span?.status).toMatchObject({ code: 2, message: 'boom' });
    expect(span?.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('runs untouched without a tracer (tracing off)', async () => {
    const ran = await traceRun(undefined, facts, async () => answer(1));
    expect(ran.batchSize).toBe(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('counts a decoupled run’s responses, failed runs included', async () => {
    await traceDecoupledRun(tracer, facts, async (responded) => {
      responded();
      responded();
    });
    const failing = traceDecoupledRun(tracer, facts, async (responded) => {
      responded();
      throw new Error('cut off');
    });
    await expect(failing).rejects.toThrow('cut off');
    const [ok, failed] = exporter.getFinishedSpans();
    expect(ok?.attributes).toMatchObject({ 'nvcf.model.decoupled': true, 'nvcf.responses': 2 });
    expect(failed?.attributes).toMatchObject({ 'nvcf.responses': 1 });
    expect(failed?.status.code).toBe(2);
  });
});
