import { createApiKeyStore } from '@nvcf/control-store';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient, int32Bytes } from './grpc-test-fixture.ts';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness, pexec, simpleRequest, verId } from './harness.ts';
import { createRunGate, heldRequest, type RunGate } from './held-model.ts';
import { eventually, sampleValue, scrape } from './prometheus-scrape.ts';

let h: Harness;
let gate: RunGate;

beforeAll(async () => {
  h = await createHarness({ heldModel: true });
  gate = await createRunGate();
  // A first worker run publishes the repository's functions, then goes away: requests below wait in their
  // queues until a test starts a worker.
  const w = await h.worker();
  await w.close();
});
afterAll(async () => {
  await h?.close();
});

const simple = { function_id: fnId('simple'), function_version_id: verId('simple') };
const held = { function_id: fnId('held'), function_version_id: verId('held') };
const PEXEC_ROUTE = '/v2/nvcf/pexec/functions/:functionId';
const STATUS_ROUTE = '/v2/nvcf/pexec/status/:requestId';

async function metricsGateway(overrides: Record<string, string> = {}) {
  // Depths read on every scrape: the test looks right after each change.
  const gw = await h.gateway({ GATEWAY_METRICS_QUEUE_CACHE_MS: '0', ...overrides });
  expect(gw.metricsPort).toBeGreaterThan(0);
  return { gw, metrics: `http://127.0.0.1:${gw.metricsPort}/metrics` };
}

describe('gateway metrics (GET /metrics on GATEWAY_METRICS_PORT)', () => {
  it('counts a 202 and the queue it waits in, then the 200, its latency and final status once a worker runs', async () => {
    const { gw, metrics } = await metricsGateway();
    const accepted = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    expect(accepted.status).toBe(202);
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';

    let { samples } = await scrape(metrics);
    expect(sampleValue(samples, 'nvcf_gateway_invocations_accepted_total', simple)).toBe(1);
    expect(sampleValue(samples, 'nvcf_gateway_http_responses_total', { route: PEXEC_ROUTE, code: '202' })).toBe(1);
    expect(sampleValue(samples, 'nvcf_queue_jobs', { ...simple, state: 'waiting' })).toBe(1);
    expect(sampleValue(samples, 'nvcf_queue_jobs', { ...simple, state: 'active' })).toBe(0);
    expect(sampleValue(samples, 'nvcf_queue_jobs', { ...simple, state: 'delayed' })).toBe(0);
    // The pexec waited out its one-second window before the 202: the job is at least that old.
    expect(sampleValue(samples, 'nvcf_queue_oldest_waiting_job_age_seconds', simple)).toBeGreaterThanOrEqual(0.9);
    expect(
      samples.some(
        (s) =>
          s.name === 'nvcf_function_version_live_workers' &&
          s.labels.function_version_id === simple.function_version_id &&
          s.value === 0,
      ),
    ).toBe(true);
    expect(sampleValue(samples, 'nvcf_gateway_invocations_total', { ...simple, status: '200' })).toBe(0);

    // A long-poll waits: it is open until its answer is written.
    const answer = gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '60' } });
    await eventually(metrics, (s) =>
      expect(sampleValue(s, 'nvcf_gateway_open_requests', { kind: 'long_poll' })).toBe(1),
    );
    const worker = await h.worker();
    const done = await answer;
    expect(done.status).toBe(200);
    await done.arrayBuffer();

    samples = await eventually(metrics, (s) => {
      expect(sampleValue(s, 'nvcf_gateway_invocations_total', { ...simple, status: '200' })).toBe(1);
      expect(sampleValue(s, 'nvcf_gateway_open_requests', { kind: 'long_poll' })).toBe(0);
    });
    expect(sampleValue(samples, 'nvcf_gateway_http_responses_total', { route: STATUS_ROUTE, code: '200' })).toBe(1);
    // Accepted before a one-second window: its latency is at least that, and lands in the histogram once.
    expect(sampleValue(samples, 'nvcf_gateway_invocation_duration_seconds_count', simple)).toBe(1);
    expect(sampleValue(samples, 'nvcf_gateway_invocation_duration_seconds_sum', simple)).toBeGreaterThanOrEqual(0.9);
    expect(sampleValue(samples, 'nvcf_queue_jobs', { ...simple, state: 'waiting' })).toBe(0);
    expect(sampleValue(samples, 'nvcf_queue_oldest_waiting_job_age_seconds', simple)).toBe(0);
    expect(sampleValue(samples, 'nvcf_function_version_live_workers', simple)).toBe(1);
    // The worker saw the job wait in its queue from before the window to its own start, and its 200.
    const workerSamples = (await scrape(`http://127.0.0.1:${worker.ports.metrics}/metrics`)).samples;
    expect(sampleValue(workerSamples, 'nvcf_worker_job_queue_wait_seconds_count', simple)).toBe(1);
    expect(sampleValue(workerSamples, 'nvcf_worker_job_queue_wait_seconds_sum', simple)).toBeGreaterThanOrEqual(0.9);
    expect(sampleValue(workerSamples, 'nvcf_worker_job_processing_seconds_count', simple)).toBe(1);
    expect(sampleValue(workerSamples, 'nvcf_worker_jobs_total', { ...simple, status: '200' })).toBe(1);
    // Triton's model metrics stay on the same port, as they were.
    expect(workerSamples.some((s) => s.name === 'nv_inference_request_success')).toBe(true);

    // An answer that comes within the call: a 200 on the pexec route itself.
    const direct = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest());
    expect(direct.status).toBe(200);
    await direct.arrayBuffer();
    samples = await eventually(metrics, (s) =>
      expect(sampleValue(s, 'nvcf_gateway_invocations_total', { ...simple, status: '200' })).toBe(2),
    );
    expect(sampleValue(samples, 'nvcf_gateway_http_responses_total', { route: PEXEC_ROUTE, code: '200' })).toBe(1);
    expect(sampleValue(samples, 'nvcf_gateway_invocation_duration_seconds_count', simple)).toBe(2);
    // The process's own metrics come with them (CPU, memory) under their usual names.
    expect(samples.some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);
    await worker.close();
  });

  it('shows a job a worker holds as active and an open event stream until its answer, then counts the answer', async () => {
    const { gw, metrics } = await metricsGateway();
    const child = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    // Not awaited: a stream's headers go out with its first event, and the held run sends none until the gate opens.
    const stream = pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('held')}`, heldRequest([1, 2, 3, 4]), {
      accept: 'text/event-stream',
    });
    await gate.entered();
    const samples = await eventually(metrics, (s) => {
      expect(sampleValue(s, 'nvcf_queue_jobs', { ...held, state: 'active' })).toBe(1);
      expect(sampleValue(s, 'nvcf_gateway_open_requests', { kind: 'stream' })).toBe(1);
    });
    expect(sampleValue(samples, 'nvcf_queue_jobs', { ...held, state: 'waiting' })).toBe(0);
    expect(sampleValue(samples, 'nvcf_function_version_live_workers', held)).toBe(1);

    await gate.open();
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('OUTPUT0');
    const after = await eventually(metrics, (s) => {
      expect(sampleValue(s, 'nvcf_gateway_open_requests', { kind: 'stream' })).toBe(0);
      expect(sampleValue(s, 'nvcf_queue_jobs', { ...held, state: 'active' })).toBe(0);
      // The streamed answer is an invocation finished like a 200 would be, with its latency, once.
      expect(sampleValue(s, 'nvcf_gateway_invocations_total', { ...held, status: '200' })).toBe(1);
    });
    expect(sampleValue(after, 'nvcf_gateway_invocation_duration_seconds_count', held)).toBe(1);
    child.child.kill('SIGTERM');
    await child.exited;
  });

  it('counts a large result handed out as a 302 under status 302', async () => {
    const { gw, metrics } = await metricsGateway();
    // Answers over 64 bytes are stored and redirected to (NVCF: results over 5 MiB).
    const worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest());
    expect(res.status).toBe(302);
    await res.arrayBuffer();
    const samples = await eventually(metrics, (s) =>
      expect(sampleValue(s, 'nvcf_gateway_invocations_total', { ...simple, status: '302' })).toBe(1),
    );
    expect(sampleValue(samples, 'nvcf_gateway_http_responses_total', { route: PEXEC_ROUTE, code: '302' })).toBe(1);
    expect(sampleValue(samples, 'nvcf_gateway_invocations_total', { ...simple, status: '200' })).toBe(0);
    await worker.close();
  });

  it('counts 401, 403 and 429 answers by route', async () => {
    const { gw, metrics } = await metricsGateway({ RATE_LIMIT_PER_MINUTE: '1' });
    const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    const noKey = await fetch(`${gw.url}${path}`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(401);
    const { key } = await createApiKeyStore(h.redis, createKeys(h.keyPrefix)).create({
      name: 'metrics-test',
      scopes: ['list_functions'],
    });
    const forbidden = await pexec(gw.url, path, simpleRequest(), { authorization: `Bearer ${key}` });
    expect(forbidden.status).toBe(403);
    // Three calls span at most two one-minute windows: one holds two of them, over the limit of one.
    const unknown = `${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-000000000001`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await gfetch(unknown, { headers: { 'nvcf-poll-seconds': '1' } })).status);
    const limited = statuses.filter((s) => s === 429).length;
    expect(limited).toBeGreaterThanOrEqual(1);

    const { samples } = await scrape(metrics);
    expect(
      sampleValue(samples, 'nvcf_gateway_http_responses_total', { method: 'POST', route: PEXEC_ROUTE, code: '401' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'nvcf_gateway_http_responses_total', { method: 'POST', route: PEXEC_ROUTE, code: '403' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'nvcf_gateway_http_responses_total', { method: 'GET', route: STATUS_ROUTE, code: '429' }),
    ).toBe(limited);
    expect(
      sampleValue(samples, 'nvcf_gateway_http_responses_total', { method: 'GET', route: STATUS_ROUTE, code: '404' }),
    ).toBe(3 - limited);
    // A refused call never counts as open.
    expect(sampleValue(samples, 'nvcf_gateway_open_requests', { kind: 'long_poll' })).toBe(0);
  });

  it('counts gRPC calls by method and status, refusals on metadata alone included', async () => {
    const { gw, metrics } = await metricsGateway();
    const worker = await h.worker();
    const grpc = grpcClient(`127.0.0.1:${gw.grpcPort}`);
    try {
      const ints = Array.from({ length: 16 }, (_, i) => i);
      const request = {
        model_name: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
        ],
        raw_input_contents: [int32Bytes(ints), int32Bytes(ints)],
      };
      const refused = await grpc.fail('ModelInfer', request, { metadata: { 'function-id': fnId('simple') } });
      expect(refused.error.code).toBe(16);
      const metadata = { 'function-id': fnId('simple'), authorization: `Bearer ${ADMIN_KEY}` };
      await grpc.call('ModelInfer', request, { metadata });

      const samples = await eventually(metrics, (s) =>
        // A ModelInfer is an invocation like a pexec: its answer counts once delivered.
        expect(sampleValue(s, 'nvcf_gateway_invocations_total', { ...simple, status: '200' })).toBe(1),
      );
      expect(
        sampleValue(samples, 'nvcf_gateway_grpc_responses_total', { method: 'ModelInfer', code: 'UNAUTHENTICATED' }),
      ).toBe(1);
      expect(sampleValue(samples, 'nvcf_gateway_grpc_responses_total', { method: 'ModelInfer', code: 'OK' })).toBe(1);
    } finally {
      grpc.close();
      await worker.close();
    }
  });

  it('answers 404 off /metrics and is off with GATEWAY_METRICS_PORT=-1', async () => {
    const { gw } = await metricsGateway();
    const other = await fetch(`http://127.0.0.1:${gw.metricsPort}/v2/nvcf/functions`);
    expect(other.status).toBe(404);
    await other.text();
    const off = await h.gateway({ GATEWAY_METRICS_PORT: '-1' });
    expect(off.metricsPort).toBe(0);
    // The API port has no /metrics: the metrics never ride on the API's port.
    const onApi = await gfetch(`${off.url}/metrics`);
    expect(onApi.status).toBe(404);
    await onApi.text();
  });
});
