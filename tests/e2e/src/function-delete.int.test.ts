import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { buildSimpleModel } from '@nvcf/models';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, gfetch, type Harness, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

type Fn = { id: string; versionId: string };
const json = (method: string, path: string, body?: unknown) =>
  gfetch(`${gw.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A function whose model is an uploaded `.onnx` asset, deployed. */
async function deployUploadedModel(name: string): Promise<Fn> {
  const asset = (await (
    await json('POST', '/v2/nvcf/assets', { contentType: 'application/octet-stream', description: 'model' })
  ).json()) as { assetId: string; uploadUrl: string };
  const put = await fetch(asset.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'model' },
    body: buildSimpleModel(),
  });
  expect(put.status).toBe(200);
  const created = await json('POST', '/v2/nvcf/functions', {
    name,
    inferenceUrl: '/v2/models/m/infer',
    inferencePort: 8000,
    containerImage: 'nvcf/onnx-worker:latest',
    apiBodyFormat: 'PREDICT_V2',
    models: [{ name: 'm', version: '1', uri: `asset://${asset.assetId}` }],
  });
  expect(created.status).toBe(200);
  const fn = ((await created.json()) as { function: Fn }).function;
  const deployed = await json('POST', `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`, {
    deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 1 }],
  });
  expect(deployed.status).toBe(200);
  return fn;
}

/** What a KServe client of the worker sees of a model. */
const kserve = (w: RunningWorker) => ({
  ready: async (model: string) => (await fetch(`http://127.0.0.1:${w.ports.http}/v2/models/${model}/ready`)).status,
  infer: async (model: string) =>
    (
      await fetch(`http://127.0.0.1:${w.ports.http}/v2/models/${model}/infer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(simpleRequest()),
      })
    ).status,
  indexed: async () =>
    (
      (await (await fetch(`http://127.0.0.1:${w.ports.http}/v2/repository/index`, { method: 'POST' })).json()) as {
        name: string;
      }[]
    ).map((e) => e.name),
});
const storedModel = (fn: Fn) => join(h.env.ASSET_STORE_DIR as string, 'models', fn.versionId, 'model.onnx');
const modelDir = (fn: Fn) => join(h.modelRepository, `fv-${fn.versionId}`);
const fv = (fn: Fn) => `fv-${fn.versionId}`;
/** Function models are private to their function unless a worker exposes them on its inference ports. */
const exposed = { WORKER_EXPOSE_FUNCTION_MODELS: 'true' };

describe('deleting a function version whose model was uploaded', () => {
  it('unloads the model, removes its directory and stored copy, and no restarted worker loads it', async () => {
    let worker = await h.worker(exposed);
    const doomed = await deployUploadedModel('doomed');
    const kept = await deployUploadedModel('kept');
    await until(
      async () => worker.versionIds.includes(doomed.versionId) && worker.versionIds.includes(kept.versionId),
      'the worker to serve both uploaded models',
    );
    let k = kserve(worker);
    expect(await k.ready(fv(doomed))).toBe(200);
    expect(await k.infer(fv(doomed))).toBe(200);
    expect(await exists(modelDir(doomed))).toBe(true);
    expect(await exists(storedModel(doomed))).toBe(true);

    expect((await json('DELETE', `/v2/nvcf/functions/${doomed.id}/versions/${doomed.versionId}`)).status).toBe(204);
    // The stored copy goes with the request; the worker follows the change notification.
    expect(await exists(storedModel(doomed))).toBe(false);
    await until(async () => !(await exists(modelDir(doomed))), 'the worker to remove the deleted model');
    expect(await k.ready(fv(doomed))).not.toBe(200);
    expect(await k.infer(fv(doomed))).toBeGreaterThanOrEqual(400);
    expect(worker.versionIds).not.toContain(doomed.versionId);
    // The other uploaded model is untouched.
    expect(await k.infer(fv(kept))).toBe(200);
    expect(await exists(storedModel(kept))).toBe(true);

    await worker.close();
    worker = await h.worker(exposed);
    k = kserve(worker);
    expect(await k.indexed()).not.toContain(fv(doomed));
    expect(await k.ready(fv(doomed))).not.toBe(200);
    await until(async () => (await k.ready(fv(kept))) === 200, 'the restarted worker to serve the kept model');

    // Deleted while no worker runs: its directory is still there, and the next worker does not load it.
    await worker.close();
    expect((await json('DELETE', `/v2/nvcf/functions/${kept.id}/versions/${kept.versionId}`)).status).toBe(204);
    expect(await exists(storedModel(kept))).toBe(false);
    expect(await exists(modelDir(kept))).toBe(true);
    worker = await h.worker(exposed);
    k = kserve(worker);
    expect(await exists(modelDir(kept))).toBe(false);
    expect(await k.indexed()).not.toContain(fv(kept));
    expect(await k.ready(fv(kept))).not.toBe(200);
    expect((await readdir(h.modelRepository)).filter((n) => n.startsWith('fv-') || n.startsWith('.staging'))).toEqual(
      [],
    );
    await worker.close();
  });
});
