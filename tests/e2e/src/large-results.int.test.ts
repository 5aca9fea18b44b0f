import type { RunningGateway } from '@nvcf/gateway';
import { createKeys, createResultObjectIndex } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;
let worker: RunningWorker;

beforeAll(async () => {
  h = await createHarness();
  // Every result is "large" here: the mechanism is the one a 6 MiB answer takes at the default limit.
  worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

describe('results over the direct limit', () => {
  it('pexec answers 302 to a signed URL serving a zip with <reqId>.response, byte for byte', async () => {
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest({ id: 'big' }), {});
    expect(res.status).toBe(302);
    expect(res.headers.get('nvcf-status')).toBe('fulfilled');
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const location = res.headers.get('location') ?? '';
    expect(location).toMatch(new RegExp(`/v2/nvcf/results/${reqId}\\?expires=\\d+&signature=`));
    expect(await res.text()).toBe('');

    const zipRes = await fetch(location); // no credential: the signed URL is one
    expect(zipRes.status).toBe(200);
    expect(zipRes.headers.get('content-type')).toBe('application/zip');
    const zip = unzipSync(new Uint8Array(await zipRes.arrayBuffer()));
    expect(Object.keys(zip)).toEqual([`${reqId}.response`]);
    const direct = await fetch(`http://127.0.0.1:${worker.ports.http}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { 'accept-encoding': 'identity' },
      body: JSON.stringify(simpleRequest({ id: 'big' })),
    });
    expect(strFromU8(zip[`${reqId}.response`] ?? new Uint8Array())).toBe(await direct.text());

    const tampered = location.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 1}`);
    expect((await fetch(tampered)).status).toBe(403);
    expect((await fetch(location.replace(/&signature=.*/, ''))).status).toBe(403);
  });

  it('the exec envelope answers 200 with a responseReference', async () => {
    const res = await gfetch(`${gw.url}/v2/nvcf/exec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requestHeader: { pollDurationSeconds: 30 }, requestBody: simpleRequest() }),
    });
    expect(res.status).toBe(200);
    const env = (await res.json()) as { status: string; responseReference: string; percentComplete: number };
    expect(env).toMatchObject({ status: 'fulfilled', percentComplete: 100 });
    expect((await fetch(env.responseReference)).status).toBe(200);
  });

  it('stored results are indexed for deletion when their time is up', async () => {
    const index = createResultObjectIndex(h.redis, createKeys(h.keyPrefix));
    const due = await index.takeExpired(1000);
    expect(due).toEqual([]); // none is due yet: each was tracked with the 24 h default
    await h.redis.zadd(createKeys(h.keyPrefix).resultObjectExpiries, Date.now() - 1, 'results/old.zip');
    expect(await index.takeExpired(1000)).toEqual(['results/old.zip']);
    expect(await index.takeExpired(1000)).toEqual([]);
  });
});

describe('stored results expire', () => {
  it('is deleted once its TTL is over: the signed URL then answers 404', async () => {
    const short = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64', RESULT_OBJECT_TTL_SECONDS: '1' });
    const sweeping = await h.gateway({ STORAGE_SWEEP_MS: '200' });
    await worker.close(); // only the short-TTL worker answers now
    const res = await pexec(sweeping.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest());
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect((await fetch(location)).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await fetch(location)).status;
    }
    expect(status).toBe(404);
    await short.close();
  });
});
