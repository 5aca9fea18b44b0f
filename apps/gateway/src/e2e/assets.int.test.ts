import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../server.ts';
import { createHarness, gfetch, type Harness } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

describe('assets through the gateway', () => {
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
