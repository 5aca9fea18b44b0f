import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { buildClassifierModel, CLASSIFIER_CONFIG_PBTXT, CLASSIFIER_LABELS } from '@nvcf/models';
import { buildZip, type ZipFixtureEntry, zipFile, zipZeros } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, gfetch, type Harness, pexec } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const post = (base: string, path: string, body: unknown) =>
  gfetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const createBody = (assetId: string) => ({
  name: 'zipped-model',
  inferenceUrl: '/v2/models/m/infer',
  inferencePort: 8000,
  containerImage: 'nvcf/onnx-worker:latest',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'm', version: '1', uri: `asset://${assetId}` }],
});
async function upload(base: string, entries: ZipFixtureEntry[]): Promise<string> {
  const res = await post(base, '/v2/nvcf/assets', { contentType: 'application/zip', description: 'model' });
  const asset = (await res.json()) as { assetId: string; uploadUrl: string };
  const put = await fetch(asset.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/zip', 'x-amz-meta-nvcf-asset-description': 'model' },
    body: buildZip(entries),
  });
  expect(put.status).toBe(200);
  return asset.assetId;
}
/** Every file the object store holds for function models (`models/<versionId>/…`). */
async function storedModels(): Promise<string[]> {
  const dir = join(h.env.ASSET_STORE_DIR as string, 'models');
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
/**
 * Creates a function from the asset while asking the same gateway for /health again and again: every
 * one must be answered (at least one of them while the archive is being looked at).
 */
async function createWhileProbing(base: string, assetId: string) {
  let done = false;
  const created = post(base, '/v2/nvcf/functions', createBody(assetId)).finally(() => {
    done = true;
  });
  const probes: number[] = [];
  do probes.push((await fetch(`${base}/health`)).status);
  while (!done);
  const res = await created;
  return { res, probes };
}
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('zipped model directories at function creation', () => {
  it('refuses a zip bomb (900 MiB of zeros in under 1 MB) with a 400, stores nothing, and keeps answering', async () => {
    const before = await storedModels();
    for (const descriptor of [false, true]) {
      // With sizes in the header it is refused before anything inflates; with sizes after the data
      // (a data descriptor) once the first megabyte has inflated.
      const bomb = await upload(gw.url, [
        zipFile('m/config.pbtxt', ''),
        { ...zipZeros('m/1/model.onnx', 900), descriptor },
      ]);
      const { res, probes } = await createWhileProbing(gw.url, bomb);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await res.json()) as { status: number; detail: string };
      expect(problem.status).toBe(400);
      expect(problem.detail).toMatch(
        new RegExp(
          `^Invalid request: asset '${bomb}' is not a usable model archive: archive entry 'm/1/model.onnx' .* refused as a zip bomb$`,
        ),
      );
      expect(probes.length).toBeGreaterThan(0);
      expect(probes.every((s) => s === 200)).toBe(true);
    }
    expect(await storedModels()).toEqual(before);
  });

  it('refuses an archive past MODEL_ARCHIVE_MAX_BYTES as it unpacks, while the gateway keeps answering', async () => {
    const strict = await h.gateway({ MODEL_ARCHIVE_MAX_BYTES: String(32 << 20), MODEL_ARCHIVE_MAX_RATIO: '1000000' });
    const before = await storedModels();
    const big = await upload(strict.url, [{ ...zipZeros('1/model.onnx', 256), descriptor: true }]);
    const { res, probes } = await createWhileProbing(strict.url, big);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      `Invalid request: asset '${big}' is not a usable model archive: archive unpacks to more than ${32 << 20} bytes`,
    );
    expect(probes.every((s) => s === 200)).toBe(true);
    expect(await storedModels()).toEqual(before);
  });

  it('refuses a path that leaves the model directory', async () => {
    for (const name of ['../evil.txt', 'm/../../evil.txt', '/etc/cron.d/evil']) {
      const id = await upload(gw.url, [zipFile('m/1/model.onnx', buildClassifierModel()), zipFile(name, 'x')]);
      const res = await post(gw.url, '/v2/nvcf/functions', createBody(id));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /is not a usable model archive: archive path '.*' is not allowed: it has (a '\.\.' segment|an absolute path)$/,
      );
    }
  });

  it('serves a valid archive, with only the model directory’s files unpacked on the worker', async () => {
    const worker = await h.worker();
    const id = await upload(gw.url, [
      zipFile('classifier/config.pbtxt', CLASSIFIER_CONFIG_PBTXT),
      { ...zipFile('classifier/labels.txt', CLASSIFIER_LABELS.join('\n')), descriptor: true },
      { ...zipFile('classifier/1/model.onnx', buildClassifierModel()), descriptor: true },
      zipFile('classifier/README.md', '# how this was trained'),
      zipFile('classifier/train.py', 'import torch'),
      zipFile('__MACOSX/classifier/._config.pbtxt', 'resource fork'),
      zipFile('classifier/1/.DS_Store', 'finder'),
    ]);
    const created = await post(gw.url, '/v2/nvcf/functions', createBody(id));
    expect(created.status).toBe(200);
    const fn = ((await created.json()) as { function: { id: string; versionId: string } }).function;
    const deploy = await post(gw.url, `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`, {
      deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 1 }],
    });
    expect(deploy.status).toBe(200);
    await until(async () => {
      const res = await gfetch(`${gw.url}/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`);
      return ((await res.json()) as { function: { status: string } }).function.status === 'ACTIVE';
    }, 'the archived model to be served');
    const modelDir = join(h.modelRepository, `fv-${fn.versionId}`);
    const files = (await readdir(modelDir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(modelDir.length + 1))
      .sort();
    expect(files).toEqual(['1/model.onnx', 'config.pbtxt', 'labels.txt']);
    const classified = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fn.id}`, {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array(784).fill(0.5) }],
      outputs: [{ name: 'PROBABILITIES', parameters: { classification: 2 } }],
    });
    expect(classified.status).toBe(200);
    const labels = ((await classified.json()) as { outputs: { data: string[] }[] }).outputs[0]?.data ?? [];
    for (const l of labels) expect(l).toMatch(/^\d\.\d{6}:\d:[a-z]+$/);
    await worker.close();
  });
});
