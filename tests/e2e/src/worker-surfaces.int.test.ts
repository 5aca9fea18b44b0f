import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import type { RunningGateway } from '@nvcf/gateway';
import { invokeUnary, loadKserveClients } from '@nvcf/kserve-grpc';
import { buildSimpleModel } from '@nvcf/models';
import { functionModelName } from '@nvcf/storage';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

// The worker's own ports (KServe HTTP 8000, gRPC 8001) carry no NVCF credential: by default they must not
// let a caller unload models or reach a private function's model, while queue jobs keep running.
let h: Harness;
let gw: RunningGateway;
let fn: { id: string; versionId: string };
let model: string;

const json = (method: string, path: string, body?: unknown) =>
  gfetch(`${gw.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
const workerUrl = (w: RunningWorker) => `http://127.0.0.1:${w.ports.http}`;
const post = (url: string, headers: Record<string, string> = {}, body = '') =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  const asset = (await (
    await json('POST', '/v2/nvcf/assets', { contentType: 'application/octet-stream', description: 'model' })
  ).json()) as { assetId: string; uploadUrl: string };
  await fetch(asset.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'model' },
    body: buildSimpleModel(),
  });
  const created = await json('POST', '/v2/nvcf/functions', {
    name: 'private-model',
    inferenceUrl: '/v2/models/mine/infer',
    inferencePort: 8000,
    containerImage: 'nvcf/onnx-worker:latest',
    apiBodyFormat: 'PREDICT_V2',
    models: [{ name: 'mine', version: '1', uri: `asset://${asset.assetId}` }],
  });
  fn = ((await created.json()) as { function: { id: string; versionId: string } }).function;
  model = functionModelName(fn.versionId);
  const deploy = await json('POST', `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`, {
    deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 1 }],
  });
  expect(deploy.status).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

describe('a worker with default settings', () => {
  it('refuses unload, hides the function’s model, and still runs both functions from the queue', async () => {
    const w = await h.worker();
    await until(
      async () => (await pexec(gw.url, `/v2/nvcf/pexec/functions/${fn.id}`, simpleRequest())).status === 200,
      'the private function',
    );

    const unload = await post(`${workerUrl(w)}/v2/repository/models/simple/unload`);
    expect([unload.status, await errorOf(unload)]).toEqual([
      503,
      'explicit model load / unload is not allowed if polling is enabled',
    ]);
    expect((await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest())).status).toBe(200);

    const infer = await post(`${workerUrl(w)}/v2/models/${model}/infer`, {}, JSON.stringify(simpleRequest()));
    expect([infer.status, await errorOf(infer)]).toEqual([400, `Request for unknown model: '${model}' is not found`]);
    const index = await (await post(`${workerUrl(w)}/v2/repository/index`)).text();
    expect(index).toContain('"simple"');
    expect(index).not.toContain(model);
    const { GRPCInferenceService } = loadKserveClients();
    const grpc = new GRPCInferenceService(`127.0.0.1:${w.ports.grpc}`, credentials.createInsecure());
    const unloadGrpc = await invokeUnary(grpc, GRPCInferenceService.service, 'RepositoryModelUnload', {
      model_name: 'simple',
    }).then(
      () => null,
      (e: ServiceError) => e,
    );
    grpc.close();
    expect(unloadGrpc?.code).toBe(status.UNAVAILABLE);

    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fn.id}`, simpleRequest());
    expect(res.status).toBe(200);
    await w.close();
  });
});

describe('a worker configured open, behind a restricted repository API', () => {
  it('serves the function model, allows unload with the header, and bounds gRPC messages', async () => {
    const w = await h.worker({
      WORKER_MODEL_CONTROL_MODE: 'explicit',
      WORKER_EXPOSE_FUNCTION_MODELS: 'true',
      WORKER_RESTRICTED_API: 'model-repository:x-nvcf-worker-key=let-me-in',
      WORKER_GRPC_MAX_RECEIVE_BYTES: '4096',
    });
    const url = workerUrl(w);
    await until(async () => (await fetch(`${url}/v2/models/${model}/ready`)).status === 200, 'the model to load');
    const infer = await post(`${url}/v2/models/${model}/infer`, {}, JSON.stringify(simpleRequest()));
    expect(infer.status).toBe(200);

    const refused = await post(`${url}/v2/repository/index`);
    expect([refused.status, await errorOf(refused)]).toEqual([
      403,
      "This API is restricted, expecting header 'x-nvcf-worker-key'",
    ]);
    const key = { 'x-nvcf-worker-key': 'let-me-in' };
    expect(await (await post(`${url}/v2/repository/index`, key)).text()).toContain(model);
    expect((await post(`${url}/v2/repository/models/classifier/unload`, key)).status).toBe(200);
    expect((await fetch(`${url}/v2/models/classifier/ready`)).status).toBe(400);

    const { GRPCInferenceService } = loadKserveClients();
    const grpc = new GRPCInferenceService(`127.0.0.1:${w.ports.grpc}`, credentials.createInsecure());
    const big = await invokeUnary(grpc, GRPCInferenceService.service, 'ModelInfer', {
      model_name: 'simple',
      inputs: [],
      raw_input_contents: [Buffer.alloc(8192)],
    }).then(
      () => null,
      (e: ServiceError) => e,
    );
    grpc.close();
    expect(big?.code).toBe(status.RESOURCE_EXHAUSTED);
    await w.close();
  });
});
