import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { buildClassifierModel, buildSimpleModel, CLASSIFIER_CONFIG_PBTXT, CLASSIFIER_LABELS } from '@nvcf/models';
import { createKeys } from '@nvcf/queue';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const json = (method: string, path: string, body?: unknown) =>
  gfetch(`${gw.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const createBody = (over: Record<string, unknown> = {}) => ({
  name: 'sum-and-difference',
  inferenceUrl: '/v2/models/simple/infer',
  inferencePort: 8000,
  containerImage: 'nvcf/onnx-worker:latest',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
  tags: ['demo'],
  ...over,
});
const deployBody = (over: Record<string, unknown> = {}) => ({
  deploymentSpecifications: [
    { gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 2, maxRequestConcurrency: 2, ...over },
  ],
});
type Fn = {
  id: string;
  versionId: string;
  status: string;
  name: string;
  tags: string[];
  description: string;
  createdAt: string;
};
const statusOf = async (fid: string, vid: string) =>
  ((await (await json('GET', `/v2/nvcf/functions/${fid}/versions/${vid}`)).json()) as { function: Fn }).function.status;
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('functions and deployments', () => {
  it('refuses invalid registrations with NVCF-worded 400s', async () => {
    await (await h.worker()).close(); // publishes the repository models, then leaves
    const cases: [Record<string, unknown>, RegExp][] = [
      [createBody({ name: '-bad' }), /^Invalid request: 'name' must match/],
      [createBody({ name: 'x'.repeat(129) }), /'name' must be at most 128/],
      [createBody({ inferenceUrl: '' }), /'inferenceUrl' must not be blank/],
      [createBody({ apiBodyFormat: 'XML' }), /'apiBodyFormat'/],
      [createBody({ helmChart: 'c', helmChartServiceName: 's' }), /mutually exclusive/],
      [
        createBody({ health: { protocol: 'HTTP', uri: '/h', port: 8000, timeout: '10s', expectedStatusCode: 200 } }),
        /ISO-8601/,
      ],
      [
        createBody({ models: [{ name: 'nope', version: '1', uri: 'model-repository://nope/1' }] }),
        /not in any worker's model repository/,
      ],
      // Without models, a containerImage makes a container function; without either, models are asked for.
      [createBody({ models: undefined, containerImage: undefined }), /'models' must name the ONNX model/],
      [createBody({ helmChart: 'c', helmChartServiceName: 's', containerImage: undefined }), /Helm chart functions/],
    ];
    for (const [body, detail] of cases) {
      const res = await json('POST', '/v2/nvcf/functions', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    }
    const notJson = await gfetch(`${gw.url}/v2/nvcf/functions`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('creates INACTIVE, deploys, serves, degrades, recovers, undeploys, deletes', async () => {
    const created = await json('POST', '/v2/nvcf/functions', createBody());
    expect(created.status).toBe(200);
    const fn = ((await created.json()) as { function: Fn }).function;
    expect(fn).toMatchObject({
      name: 'sum-and-difference',
      status: 'INACTIVE',
      tags: ['demo'],
      containerImage: 'nvcf/onnx-worker:latest',
      // Every field NVCF's FunctionDto requires; a model function is checked on the worker's readiness path.
      healthUri: '/v2/health/ready',
      functionType: 'DEFAULT',
      resources: [],
      containerEnvironment: [],
      activeInstances: [],
    });
    const path = `/v2/nvcf/pexec/functions/${fn.id}`;
    const inactive = await pexec(gw.url, path, simpleRequest());
    expect(inactive.status).toBe(400);
    expect(((await inactive.json()) as { detail: string }).detail).toBe(
      `Function id '${fn.id}': INACTIVE function cannot be invoked`,
    );

    const deployPath = `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`;
    const bad = await json('POST', deployPath, deployBody({ minInstances: 3, maxInstances: 1 }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toBe(
      "Invalid request: 'minInstances' must be lesser than or equal to 'maxInstances'",
    );
    expect((await json('POST', deployPath, { deploymentSpecifications: [] })).status).toBe(400);
    expect((await json('POST', deployPath, deployBody({ maxRequestConcurrency: 0 }))).status).toBe(400);
    // NVCF's bound: 1 to 1024.
    const tooMany = await json('POST', deployPath, deployBody({ maxRequestConcurrency: 1025 }));
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { detail: string }).detail).toMatch(/'maxRequestConcurrency'/);

    const deployed = await json('POST', deployPath, deployBody());
    expect(deployed.status).toBe(200);
    const dep = (
      (await deployed.json()) as {
        deployment: {
          functionStatus: string;
          functionName: string;
          createdAt: string;
          deploymentSpecifications: unknown[];
        };
      }
    ).deployment;
    expect(dep.functionName).toBe('sum-and-difference');
    expect(Date.parse(dep.createdAt)).toBeGreaterThanOrEqual(Date.parse(fn.createdAt));
    expect(dep.functionStatus).toBe('DEPLOYING'); // minInstances 1, no worker yet: not invocable
    const deploying = await pexec(gw.url, path, simpleRequest());
    expect(((await deploying.json()) as { detail: string }).detail).toBe(
      `Function id '${fn.id}': DEPLOYING function cannot be invoked`,
    );

    // A worker holding the model picks the new version up without a restart.
    const worker = await h.worker();
    await until(async () => (await statusOf(fn.id, fn.versionId)) === 'ACTIVE', 'ACTIVE');
    const ok = await pexec(gw.url, path, simpleRequest());
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data[15]).toBe(16);

    // Two instances wanted, one live: still ACTIVE (NVCF's statuses have no state between) and invocable.
    const put = await json('PUT', deployPath, deployBody({ minInstances: 2, maxInstances: 2 }));
    expect(put.status).toBe(200);
    // A PUT changes the deployment, not when it was made.
    expect(((await put.json()) as { deployment: { createdAt: string } }).deployment.createdAt).toBe(dep.createdAt);
    expect(await statusOf(fn.id, fn.versionId)).toBe('ACTIVE');
    expect((await pexec(gw.url, path, simpleRequest())).status).toBe(200);
    const gpuChange = await json('PUT', deployPath, deployBody({ gpu: 'H100' }));
    expect(gpuChange.status).toBe(400);
    expect((await json('GET', deployPath)).status).toBe(200);

    // Undeploy: INACTIVE, and the worker stops consuming that version.
    expect((await json('DELETE', `${deployPath}?graceful=soon`)).status).toBe(400);
    // NVCF's `graceful` is accepted: an undeploy always lets in-flight requests finish.
    const undeployed = await json('DELETE', `${deployPath}?graceful=true`);
    expect(undeployed.status).toBe(200);
    expect(((await undeployed.json()) as { function: Fn }).function.status).toBe('INACTIVE');
    await until(async () => !worker.versionIds.includes(fn.versionId), 'the worker to drop the version');

    const meta = await json('PUT', `/v2/nvcf/metadata/functions/${fn.id}/versions/${fn.versionId}`, {
      tags: ['a', 'b'],
      description: 'd',
    });
    expect(((await meta.json()) as { function: Fn }).function).toMatchObject({ tags: ['a', 'b'], description: 'd' });
    const second = await json('POST', `/v2/nvcf/functions/${fn.id}/versions`, createBody());
    const v2 = ((await second.json()) as { function: Fn }).function;
    expect(v2.id).toBe(fn.id);
    expect(v2.versionId).not.toBe(fn.versionId);
    const versions = (await (await json('GET', `/v2/nvcf/functions/${fn.id}/versions`)).json()) as { functions: Fn[] };
    expect(versions.functions.map((f) => f.versionId)).toEqual([fn.versionId, v2.versionId]);
    const ids = (await (await json('GET', '/v2/nvcf/functions/ids')).json()) as { functionIds: string[] };
    expect(ids.functionIds).toContain(fn.id);

    const del = await json('DELETE', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await json('GET', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`)).status).toBe(404);
    await worker.close();
  });

  it('serves a model uploaded as an asset; refuses an asset that is not a model', async () => {
    const upload = async (bytes: Uint8Array) => {
      const res = await json('POST', '/v2/nvcf/assets', {
        contentType: 'application/octet-stream',
        description: 'model',
      });
      const asset = (await res.json()) as { assetId: string; uploadUrl: string };
      const put = await fetch(asset.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'model' },
        body: bytes,
      });
      expect(put.status).toBe(200);
      return asset.assetId;
    };
    const junk = await upload(Buffer.from('definitely not an onnx model'));
    const refused = await json(
      'POST',
      '/v2/nvcf/functions',
      createBody({ models: [{ name: 'm', version: '1', uri: `asset://${junk}` }] }),
    );
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/is not a usable ONNX model/);

    const good = await upload(buildSimpleModel());
    const created = await json(
      'POST',
      '/v2/nvcf/functions',
      createBody({ name: 'uploaded-simple', models: [{ name: 'mine', version: '1', uri: `asset://${good}` }] }),
    );
    expect(created.status).toBe(200);
    const fn = ((await created.json()) as { function: Fn & { model: { inputs: { name: string; shape: number[] }[] } } })
      .function;
    expect(fn.model.inputs.map((i) => i.name)).toEqual(['INPUT0', 'INPUT1']);
    // The asset can go away: the function keeps its own copy of the model.
    expect((await json('DELETE', `/v2/nvcf/assets/${good}`)).status).toBe(204);
    const worker = await h.worker();
    const deployPath = `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`;
    expect((await json('POST', deployPath, deployBody())).status).toBe(200);
    await until(async () => (await statusOf(fn.id, fn.versionId)) === 'ACTIVE', 'the uploaded model to be served');
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fn.id}`, simpleRequest());
    expect(res.status).toBe(200);
    const out = (await res.json()) as { model_name: string; outputs: { name: string; data: number[] }[] };
    expect(out.outputs.find((o) => o.name === 'OUTPUT1')?.data[0]).toBe(-1);

    // A zipped model directory: its config and labels come along (classification answers with labels).
    const zip = zipSync({
      'classifier/config.pbtxt': strToU8(CLASSIFIER_CONFIG_PBTXT),
      'classifier/labels.txt': strToU8(CLASSIFIER_LABELS.join('\n')),
      'classifier/1/model.onnx': buildClassifierModel(),
    });
    const archiveId = await upload(Buffer.from(zip));
    const archived = await json(
      'POST',
      '/v2/nvcf/functions',
      createBody({ name: 'zipped-classifier', models: [{ name: 'c', version: '1', uri: `asset://${archiveId}` }] }),
    );
    expect(archived.status).toBe(200);
    const zfn = ((await archived.json()) as { function: Fn }).function;
    expect(
      (await json('POST', `/v2/nvcf/deployments/functions/${zfn.id}/versions/${zfn.versionId}`, deployBody())).status,
    ).toBe(200);
    await until(async () => (await statusOf(zfn.id, zfn.versionId)) === 'ACTIVE', 'the archived model to be served');
    const classified = await pexec(gw.url, `/v2/nvcf/pexec/functions/${zfn.id}`, {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array(784).fill(0.5) }],
      outputs: [{ name: 'PROBABILITIES', parameters: { classification: 2 } }],
    });
    expect(classified.status).toBe(200);
    const labels = ((await classified.json()) as { outputs: { data: string[] }[] }).outputs[0]?.data ?? [];
    expect(labels).toHaveLength(2);
    for (const l of labels) expect(l).toMatch(/^\d\.\d{6}:\d:[a-z]+$/);
    await worker.close();
  });

  it('needs the control-plane scopes', async () => {
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key } = await store.create({ name: 'reader', scopes: ['list_functions', 'invoke_function'] });
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = await fetch(`${gw.url}/v2/nvcf/functions`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(createBody()),
    });
    expect(post.status).toBe(403);
    const fns = (await (await fetch(`${gw.url}/v2/nvcf/functions`, { headers: auth })).json()) as { functions: Fn[] };
    const any = fns.functions[0] as Fn;
    const dep = await fetch(`${gw.url}/v2/nvcf/deployments/functions/${any.id}/versions/${any.versionId}`, {
      headers: auth,
    });
    expect(dep.status).toBe(403);
  });
});
