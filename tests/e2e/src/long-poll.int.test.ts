import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  // A first worker run publishes the repository's functions, then goes away: the gateways below
  // start with no worker serving anything.
  const w = await h.worker();
  await w.close();
});
afterAll(async () => {
  await h?.close();
});

const status = (url: string, reqId: string, headers: Record<string, string> = {}) =>
  gfetch(`${url}/v2/nvcf/pexec/status/${reqId}`, { headers });

describe('long polling', () => {
  it('202 while no worker runs, then 200 on a poll once a worker starts, then 404', async () => {
    const gw = await h.gateway();
    const t0 = Date.now();
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    const waited = Date.now() - t0;
    expect(res.status).toBe(202);
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(5000);
    expect(await res.text()).toBe('');
    expect(res.headers.get('content-length')).toBe('0');
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('nvcf-status')).toBe('in-progress');
    expect(res.headers.get('nvcf-percent-complete')).toBe('0');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/nvcf-reqid/i);

    const again = await status(gw.url, reqId, { 'nvcf-poll-seconds': '1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('nvcf-reqid')).toBe(reqId);

    // The poll is already waiting when the worker comes up: the completion wakes it.
    const pending = status(gw.url, reqId, { 'nvcf-poll-seconds': '30' });
    const worker = await h.worker();
    const done = await pending;
    expect(done.status).toBe(200);
    expect(done.headers.get('nvcf-status')).toBe('fulfilled');
    expect(done.headers.get('nvcf-reqid')).toBe(reqId);
    const body = (await done.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs.find((o) => o.name === 'OUTPUT0')?.data[15]).toBe(16);

    // A result is delivered once (NVCF behaviour: results).
    const gone = await status(gw.url, reqId);
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toMatch(/problem\+json/);
    await worker.close();
  });

  it('a status poll is answered by a gateway other than the one that accepted the request', async () => {
    const a = await h.gateway();
    const b = await h.gateway();
    const res = await pexec(a.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const viaB = await status(b.url, reqId, { 'nvcf-poll-seconds': '1' });
    expect(viaB.status).toBe(202);
    expect(viaB.headers.get('nvcf-reqid')).toBe(reqId);
    const worker = await h.worker();
    const done = await status(b.url, reqId, { 'nvcf-poll-seconds': '30' });
    expect(done.status).toBe(200);
    expect(done.headers.get('nvcf-status')).toBe('fulfilled');
    // Delivered through B: A knows it too, because the state lives in Redis.
    expect((await status(a.url, reqId)).status).toBe(404);
    await worker.close();
  });

  it('unknown request id → 404 problem+json', async () => {
    const gw = await h.gateway();
    const res = await status(gw.url, '00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/not found/);
  });
});

describe('NVCF-POLL-SECONDS', () => {
  it('accepts 1..3600, clamps 0 and negatives to 1, refuses non-integers and > 3600', async () => {
    const gw = await h.gateway();
    await h.worker();
    const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    for (const ok of ['1', '300', '3600', '0', '-5']) {
      const res = await pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': ok });
      expect(res.status, `NVCF-POLL-SECONDS: ${ok}`).toBe(200);
    }
    const tooBig = await pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': '3601' });
    expect(tooBig.status).toBe(400);
    expect(((await tooBig.json()) as { detail: string }).detail).toBe('NVCF-POLL-SECONDS must be <= 3600');
    for (const bad of ['abc', '1.5', '']) {
      const res = await pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': bad });
      expect(res.status, `NVCF-POLL-SECONDS: '${bad}'`).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    const badPoll = await gfetch(`${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-000000000000`, {
      headers: { 'nvcf-poll-seconds': '99999' },
    });
    expect(badPoll.status).toBe(400);
  });
});
