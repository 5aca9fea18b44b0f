import { status } from '@grpc/grpc-js';
import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayGrpcFixture, int32Bytes, startGatewayGrpcFixture } from './grpc-test-fixture.ts';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness, pexec } from './harness.ts';

/**
 * NVCF's error body, relayed from a function, has every field: type, title, status, detail,
 * instance (the path the client called) and requestId — on pexec, status polls, exec and gRPC.
 */
let h: Harness;
let gw: RunningGateway;
let fx: GatewayGrpcFixture;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; workers start where a test needs one
  fx = await startGatewayGrpcFixture(h);
  gw = fx.gateway;
});
afterAll(async () => {
  fx?.close();
  await h?.close();
});

/** `simple` refuses FP32 inputs: a 400 from the worker. */
const refused = {
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array(16).fill(1) }],
};

function expectNvcfProblem(body: Record<string, unknown>, instance: string, requestId: string) {
  expect(Object.keys(body).sort()).toEqual(['detail', 'instance', 'requestId', 'status', 'title', 'type']);
  expect(body).toMatchObject({
    type: 'urn:inference-service:problem-details:bad-request',
    title: 'Bad Request',
    status: 400,
    instance,
    requestId,
  });
  expect(body.detail).toMatch(/data-type is 'FP32', but model 'simple' expects 'INT32'/);
}

describe("a function's error body", () => {
  it('pexec: every field, instance = the pexec path', async () => {
    const worker = await h.worker();
    const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    const res = await pexec(gw.url, path, refused);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expectNvcfProblem((await res.json()) as Record<string, unknown>, path, res.headers.get('nvcf-reqid') ?? '');
    await worker.close();
  });

  it('status poll: every field, instance = the status path', async () => {
    const accepted = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, refused, {
      'nvcf-poll-seconds': '1',
    });
    expect(accepted.status).toBe(202);
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';
    const worker = await h.worker();
    const path = `/v2/nvcf/pexec/status/${reqId}`;
    const res = await gfetch(`${gw.url}${path}`, { headers: { 'nvcf-poll-seconds': '30' } });
    expect(res.status).toBe(400);
    expectNvcfProblem((await res.json()) as Record<string, unknown>, path, reqId);
    await worker.close();
  });

  it('exec: the embedded response has every field', async () => {
    const worker = await h.worker();
    const path = `/v2/nvcf/exec/functions/${fnId('simple')}`;
    const res = await gfetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requestHeader: { pollDurationSeconds: 30 }, requestBody: refused }),
    });
    expect(res.status).toBe(400);
    const env = (await res.json()) as { reqId: string; status: string; response: Record<string, unknown> };
    expect(env.status).toBe('errored');
    expectNvcfProblem(env.response, path, env.reqId);
    await worker.close();
  });

  it('gRPC ModelInfer: the status has the detail, the trailers the whole problem+json', async () => {
    const worker = await h.worker();
    const { error } = await fx.client.fail(
      'ModelInfer',
      {
        model_name: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 16] },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 16] },
        ],
        raw_input_contents: [int32Bytes(Array(16).fill(0)), int32Bytes(Array(16).fill(0))],
      },
      { metadata: { 'function-id': fnId('simple'), authorization: `Bearer ${ADMIN_KEY}` } },
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/data-type is 'FP32'/);
    const reqId = String(error.metadata.get('nvcf-reqid')[0] ?? '');
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    const problem = error.metadata.get('nvcf-problem-details-bin')[0];
    expect(Buffer.isBuffer(problem)).toBe(true);
    expectNvcfProblem(
      JSON.parse(String(problem)) as Record<string, unknown>,
      '/inference.GRPCInferenceService/ModelInfer',
      reqId,
    );
    await worker.close();
  });
});
