import type { RunningGateway } from '@nvcf/gateway';
import { createKeys, createRequestStore } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

describe('progress (NVCF function creation: partial responses)', () => {
  it('polls answer 202 with NVCF-PERCENT-COMPLETE and the latest partial response, in order, then 200', async () => {
    const accepted = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe('');
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';
    // What a running function reports (the generative runner does this between tokens).
    const store = createRequestStore(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 600 });
    const poll = () => gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '1' } });
    for (const [pct, partial] of [
      [42, { step: 1 }],
      [60, { step: 2 }],
    ] as const) {
      expect(await store.reportProgress(reqId, pct, Buffer.from(JSON.stringify(partial)))).toBe(true);
      const res = await poll();
      expect(res.status).toBe(202);
      expect(res.headers.get('nvcf-percent-complete')).toBe(String(pct));
      expect(res.headers.get('nvcf-status')).toBe('in-progress');
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(await res.json()).toEqual(partial);
    }
    const worker = await h.worker();
    const done = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '30' } });
    expect(done.status).toBe(200);
    // A terminal request takes no more progress.
    expect(await store.reportProgress(reqId, 99)).toBe(false);
    await worker.close();
  });
});
