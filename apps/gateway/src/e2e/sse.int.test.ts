import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../server.ts';
import { adminAuth, createHarness, fnId, gfetch, type Harness, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // publish the functions; no worker runs until the test starts one
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

describe('Accept: text/event-stream', () => {
  it('sends the headers at once, the single result as one event when it comes, then ends', async () => {
    const t0 = Date.now();
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(simpleRequest({ id: 'sse' })),
    });
    // No worker yet: the headers still arrive at once.
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('nvcf-status')).toBe('fulfilled');
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);

    const worker = await h.worker();
    const text = await res.text(); // ends when the function's last event went out
    const events = text.split('\n\n').filter((e) => e.includes('data:'));
    expect(events).toHaveLength(1);
    const data = JSON.parse(
      (events[0] ?? '')
        .split('\n')
        .find((l) => l.startsWith('data:'))
        ?.slice(5)
        .trim() ?? '{}',
    ) as {
      id: string;
      outputs: { name: string; data: number[] }[];
    };
    expect(data.id).toBe('sse');
    expect(data.outputs.find((o) => o.name === 'OUTPUT0')?.data[15]).toBe(16);
    // Delivered as events: a later status poll finds nothing to hand out.
    expect((await gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`)).status).toBe(404);
    await worker.close();
  });
});
