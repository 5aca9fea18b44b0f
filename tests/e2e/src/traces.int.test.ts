/**
 * Traces across the queue: one pexec is one trace, from the client's `traceparent` through the gateway's span, the
 * job's wait in the Redis stream and the worker's processing to the model run, each span the child of the one
 * before it, as an in-process OTLP/HTTP collector receives them. Without `OTEL_EXPORTER_OTLP_ENDPOINT` the job
 * carries no trace context (the queue's bytes per job do not grow).
 */
import { randomBytes } from 'node:crypto';
import { createKeys, InvocationJob } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient, int32Bytes } from './grpc-test-fixture.ts';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness, pexec, simpleRequest, verId } from './harness.ts';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector } from './otlp-collector.ts';

let h: Harness;
let collector: OtlpCollector;
let traced: Record<string, string>;

beforeAll(async () => {
  collector = await startOtlpCollector();
  // A short batch delay: spans reach the collector soon after they end (the test still polls for them).
  traced = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '50' };
  h = await createHarness();
  // Publish every function, then serve two only: a classifier job stays in its stream, to be read there.
  await (await h.worker()).close();
  await h.worker({ ...traced, WORKER_FUNCTION_VERSIONS: `${verId('simple')},${verId('generative')}` });
});
afterAll(async () => {
  await h?.close();
  await collector?.close();
});

/** A client's span context, as W3C Trace Context writes it (https://www.w3.org/TR/trace-context/#traceparent-header). */
function clientSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Waits (bounded) until the collector holds spans of `traceId` with every name in `names`. */
async function spansOf(traceId: string, names: string[]): Promise<CollectedSpan[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    if (names.every((n) => spans.some((s) => s.name === n))) return spans;
    if (Date.now() > deadline) {
      throw new Error(`spans of ${traceId} never arrived: got ${spans.map((s) => s.name).join(', ') || 'none'}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The job of `requestId` as it waits in its version's stream. */
async function queuedJob(versionId: string, requestId: string): Promise<Record<string, unknown>> {
  const entries = await h.redis.xrange(createKeys(h.keyPrefix).queue(versionId).stream, '-', '+');
  for (const [, fields] of entries) {
    const at = fields.indexOf('id');
    if (fields[at + 1] === requestId)
      return JSON.parse(fields[fields.indexOf('j') + 1] ?? '') as Record<string, unknown>;
  }
  throw new Error(`no queued job for ${requestId}`);
}

const classifierRequest = {
  inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array.from({ length: 784 }, () => 0.5) }],
};
const SERVER = 2;
const GATEWAY_ROUTE = 'POST /v2/nvcf/pexec/functions/:functionId';

describe('OpenTelemetry traces', () => {
  it('makes one pexec one connected trace, from the client’s traceparent to the model run', async () => {
    const gw = await h.gateway(traced);
    const client = clientSpan();
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      traceparent: client.traceparent,
      'nvcf-poll-seconds': '30',
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('nvcf-reqid');

    const spans = await spansOf(client.traceId, [GATEWAY_ROUTE, 'queue.wait', 'job.process', 'session.run']);
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found).toHaveLength(1);
      return found[0] as CollectedSpan;
    };
    const gateway = one(GATEWAY_ROUTE);
    const wait = one('queue.wait');
    const processing = one('job.process');
    const run = one('session.run');

    expect(gateway).toMatchObject({ service: 'nvcf-gateway', kind: SERVER, parentSpanId: client.spanId });
    expect(gateway.attributes).toMatchObject({ 'http.response.status_code': 200, 'nvcf.request_id': requestId });
    expect(wait).toMatchObject({ service: 'nvcf-worker', parentSpanId: gateway.spanId });
    expect(processing).toMatchObject({ service: 'nvcf-worker', parentSpanId: gateway.spanId });
    expect(processing.attributes).toMatchObject({ 'nvcf.request_id': requestId, 'nvcf.attempt': 1 });
    expect(run).toMatchObject({ service: 'nvcf-worker', parentSpanId: processing.spanId });
    expect(run.attributes).toMatchObject({
      'nvcf.model.name': 'simple',
      'nvcf.model.version': '1',
      'nvcf.request.rows': 1,
    });
    // The wait ends where the processing starts (one clock reading); spans of different processes are compared
    // by their parents only, never by their clocks.
    expect(wait.endNs).toBe(processing.startNs);
    expect(wait.startNs).toBeLessThanOrEqual(wait.endNs);
    expect(collector.refused).toEqual([]);
  });

  it('a decoupled model’s run is a session.run too, counting its responses', async () => {
    const gw = await h.gateway(traced);
    const client = clientSpan();
    const res = await pexec(
      gw.url,
      `/v2/nvcf/pexec/functions/${fnId('generative')}`,
      { prompt: 'H', max_tokens: 3 },
      { traceparent: client.traceparent, 'nvcf-poll-seconds': '30' },
    );
    expect(res.status).toBe(200);
    const spans = await spansOf(client.traceId, ['job.process', 'session.run']);
    const run = spans.find((s) => s.name === 'session.run');
    expect(run?.parentSpanId).toBe(spans.find((s) => s.name === 'job.process')?.spanId);
    expect(run?.attributes).toMatchObject({ 'nvcf.model.decoupled': true, 'nvcf.model.name': 'generative' });
    expect(run?.attributes['nvcf.responses']).toBeGreaterThan(0);
  });

  it('a status poll is a span of its own, in the client’s trace', async () => {
    const gw = await h.gateway(traced);
    const first = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, classifierRequest, {
      'nvcf-poll-seconds': '1',
    });
    expect(first.status).toBe(202);
    const client = clientSpan();
    const poll = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${first.headers.get('nvcf-reqid')}`, {
      headers: { traceparent: client.traceparent, 'nvcf-poll-seconds': '1' },
    });
    expect(poll.status).toBe(202);
    const [span] = await spansOf(client.traceId, ['GET /v2/nvcf/pexec/status/:requestId']);
    expect(span).toMatchObject({ service: 'nvcf-gateway', kind: SERVER, parentSpanId: client.spanId });
  });

  it('a gRPC ModelInfer on the gateway’s port is a server span whose trace reaches the model run', async () => {
    const gw = await h.gateway(traced);
    const client = clientSpan();
    const grpc = grpcClient(`127.0.0.1:${gw.grpcPort}`);
    try {
      const row = int32Bytes(Array.from({ length: 16 }, (_, i) => i));
      await grpc.call(
        'ModelInfer',
        {
          model_name: 'simple',
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
          ],
          raw_input_contents: [row, row],
        },
        {
          metadata: {
            'function-id': fnId('simple'),
            authorization: `Bearer ${ADMIN_KEY}`,
            traceparent: client.traceparent,
          },
        },
      );
    } finally {
      grpc.close();
    }
    const route = 'inference.GRPCInferenceService/ModelInfer';
    const spans = await spansOf(client.traceId, [route, 'job.process', 'session.run']);
    const server = spans.find((s) => s.name === route);
    expect(server).toMatchObject({ service: 'nvcf-gateway', kind: SERVER, parentSpanId: client.spanId });
    expect(server?.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.method': 'ModelInfer' });
    expect(spans.find((s) => s.name === 'job.process')?.parentSpanId).toBe(server?.spanId);
  });

  it('carries the trace context inside the job only when tracing is on', async () => {
    const on = await h.gateway(traced);
    const off = await h.gateway();
    const client = clientSpan();
    const queue = async (url: string) => {
      const res = await pexec(url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, classifierRequest, {
        traceparent: client.traceparent,
        'nvcf-poll-seconds': '1',
      });
      expect(res.status).toBe(202);
      return queuedJob(verId('classifier'), res.headers.get('nvcf-reqid') ?? '');
    };
    const withTrace = await queue(on.url);
    const without = await queue(off.url);

    expect(without).not.toHaveProperty('trace');
    expect(InvocationJob.shape.trace.parse(withTrace.trace)?.traceparent).toMatch(
      new RegExp(`^00-${client.traceId}-[0-9a-f]{16}-01$`),
    );
    // Both calls named the same client span; only the traced gateway's call is in the collector.
    const spans = await spansOf(client.traceId, [GATEWAY_ROUTE]);
    expect(spans.map((s) => s.name)).toEqual([GATEWAY_ROUTE]);
  });
});
