import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

describe('an ONNX input tensor from an asset', () => {
  it('takes the bytes of a referenced asset as the tensor (binary layout), same answer as inline data', async () => {
    const values = Array.from({ length: 784 }, (_, i) => (i % 17) / 17);
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream', description: 'input' }),
    });
    const asset = (await created.json()) as { assetId: string; uploadUrl: string };
    await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'input' },
      body: Buffer.from(Float32Array.from(values).buffer),
    });
    const path = `/v2/nvcf/pexec/functions/${fnId('classifier')}`;
    const viaAsset = await pexec(
      gw.url,
      path,
      { inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], parameters: { nvcf_asset_id: asset.assetId } }] },
      { 'nvcf-input-asset-references': asset.assetId },
    );
    expect(viaAsset.status).toBe(200);
    const inline = await pexec(gw.url, path, {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: values }],
    });
    const probs = (r: { outputs: { data: number[] }[] }) => r.outputs[0]?.data;
    expect(probs((await viaAsset.json()) as never)).toEqual(probs((await inline.json()) as never));

    // Naming an asset the invocation did not reference is refused.
    const unreferenced = await pexec(gw.url, path, {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], parameters: { nvcf_asset_id: asset.assetId } }],
    });
    expect(unreferenced.status).toBe(400);
    expect(((await unreferenced.json()) as { detail: string }).detail).toMatch(/NVCF-INPUT-ASSET-REFERENCES/);
  });
});

describe('input assets through the exec envelope', () => {
  it('requestHeader.inputAssetReferences works as NVCF-INPUT-ASSET-REFERENCES does on pexec', async () => {
    const values = Array.from({ length: 784 }, (_, i) => (i % 13) / 13);
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream', description: 'envelope input' }),
    });
    const asset = (await created.json()) as { assetId: string; uploadUrl: string };
    await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'envelope input' },
      body: Buffer.from(Float32Array.from(values).buffer),
    });
    const exec = (inputAssetReferences: string[], input: object) =>
      gfetch(`${gw.url}/v2/nvcf/exec/functions/${fnId('classifier')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          requestHeader: { inputAssetReferences, pollDurationSeconds: 30 },
          requestBody: { inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], ...input }] },
        }),
      });
    const viaAsset = await exec([asset.assetId], { parameters: { nvcf_asset_id: asset.assetId } });
    expect(viaAsset.status).toBe(200);
    const inline = await exec([], { data: values });
    type Envelope = { status: string; response: { outputs: { data: number[] }[] } };
    const envelope = (await viaAsset.json()) as Envelope;
    expect(envelope.status).toBe('fulfilled');
    expect(envelope.response.outputs[0]?.data).toEqual(((await inline.json()) as Envelope).response.outputs[0]?.data);

    const unknown = '00000000-0000-4000-8000-00000000abce';
    const missing = await exec([unknown], { data: values });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toBe(
      `NotFound error: failed to find asset ${unknown}`,
    );
    const bad = await exec(['nope'], { data: values });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toBe(
      "requestHeader.inputAssetReferences: 'nope' is not a UUID",
    );
  });
});

describe('an asset whose size does not fit the input', () => {
  it('is refused with 400 naming both sizes, before the worker reads it', async () => {
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream', description: 'short' }),
    });
    const asset = (await created.json()) as { assetId: string; uploadUrl: string };
    const upload = await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'short' },
      body: new Uint8Array(783 * 4), // one element short of [1,784] FP32
    });
    expect(upload.status).toBe(200);
    const res = await pexec(
      gw.url,
      `/v2/nvcf/pexec/functions/${fnId('classifier')}`,
      { inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], parameters: { nvcf_asset_id: asset.assetId } }] },
      { 'nvcf-input-asset-references': asset.assetId },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain(
      `input 'INPUT': asset ${asset.assetId} holds 3132 bytes, but shape [1,784] of FP32 takes 3136 bytes`,
    );
  });
});

describe('assets through the gateway', () => {
  it('NVCF-INPUT-ASSET-REFERENCES: unknown → 404 with NVCF’s text, not a UUID → 400, uploaded → invoked', async () => {
    const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const missing = await pexec(gw.url, path, simpleRequest(), { 'nvcf-input-asset-references': unknown });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toBe(
      `NotFound error: failed to find asset ${unknown}`,
    );
    expect((await pexec(gw.url, path, simpleRequest(), { 'nvcf-input-asset-references': 'nope' })).status).toBe(400);
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'text/plain', description: 'x' }),
    });
    const asset = (await created.json()) as { assetId: string; uploadUrl: string };
    await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain', 'x-amz-meta-nvcf-asset-description': 'x' },
      body: 'hello',
    });
    const ok = await pexec(gw.url, path, simpleRequest(), { 'nvcf-input-asset-references': ` ${asset.assetId} , ` });
    expect(ok.status).toBe(200);
  });

  it('create → signed PUT → get → list → delete, and a tampered URL is refused', async () => {
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream', description: 'weights' }),
    });
    expect(created.status).toBe(200);
    const asset = (await created.json()) as {
      assetId: string;
      uploadUrl: string;
      contentType: string;
      description: string;
    };
    expect(asset).toMatchObject({ contentType: 'application/octet-stream', description: 'weights' });
    const headers = { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'weights' };
    const tampered = asset.uploadUrl.replace(
      /signature=([^&])/,
      (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`,
    );
    expect((await fetch(tampered, { method: 'PUT', headers, body: 'x' })).status).toBe(403);
    const put = await fetch(asset.uploadUrl, { method: 'PUT', headers, body: Buffer.from([1, 2, 3]) });
    expect(put.status).toBe(200);
    const got = await gfetch(`${gw.url}/v2/nvcf/assets/${asset.assetId}`);
    expect(((await got.json()) as { asset: { assetId: string } }).asset.assetId).toBe(asset.assetId);
    const list = (await (await gfetch(`${gw.url}/v2/nvcf/assets`)).json()) as { assets: { assetId: string }[] };
    expect(list.assets.map((a) => a.assetId)).toContain(asset.assetId);
    expect((await gfetch(`${gw.url}/v2/nvcf/assets/${asset.assetId}`, { method: 'DELETE' })).status).toBe(204);
    const gone = await gfetch(`${gw.url}/v2/nvcf/assets/${asset.assetId}`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { detail: string }).detail).toBe(
      `NotFound error: failed to find asset ${asset.assetId}`,
    );
  });
});
