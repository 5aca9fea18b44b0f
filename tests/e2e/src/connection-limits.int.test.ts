import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

/**
 * Long-lived connections are bounded: a request body that trickles in is cut (408) without cutting
 * long-polls, one credential cannot hold more than its share of open waits, and the default rate limit
 * counts polls and streams too.
 */
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; no worker runs, so calls wait
});
afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a pexec whose body arrives one byte every `everyMs`; resolves with what the server answered. */
function trickle(url: string, everyMs: number): Promise<{ answer: string; ms: number }> {
  const u = new URL(url);
  const body = JSON.stringify(simpleRequest());
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('error', reject);
    socket.on('data', (d) => {
      answer += d.toString();
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, ms: Date.now() - t0 });
    });
    socket.on('connect', () => {
      socket.write(
        `POST /v2/nvcf/pexec/functions/${fnId('simple')} HTTP/1.1\r\nHost: ${u.host}\r\n` +
          `Authorization: ${adminAuth.authorization}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n\r\n`,
      );
      let i = 0;
      timer = setInterval(() => {
        if (i < body.length && !socket.destroyed) socket.write(body[i++] ?? '');
      }, everyMs);
    });
  });
}

describe('long-lived connections', () => {
  it('a body that trickles in is answered 408 and closed; a long-poll outlives the same bound', async () => {
    const gw = await h.gateway({ GATEWAY_BODY_TIMEOUT_MS: '1500' });
    const cut = await trickle(gw.url, 200);
    expect(cut.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(cut.ms).toBeLessThan(1500 + 5000);
    // A 4-second long-poll on the same gateway: the request arrived whole, its wait is not cut.
    const t0 = Date.now();
    const polled = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '4',
    });
    expect(polled.status).toBe(202);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3900);
  });

  it('one credential holds at most MAX_OPEN_REQUESTS_PER_CREDENTIAL open waits; a slot frees when one ends', async () => {
    const gw = await h.gateway({ MAX_OPEN_REQUESTS_PER_CREDENTIAL: '2' });
    const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    const long = [0, 1].map(() => pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': '3' }));
    // Both are open once both requests are queued.
    for (let i = 0; i < 200; i++) {
      const res = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}`);
      const depth = ((await res.json()) as { queues: { queueDepth: number }[] }).queues[0]?.queueDepth ?? 0;
      if (depth >= 2) break;
      await sleep(20);
    }
    const third = await pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': '1' });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(((await third.json()) as { detail: string }).detail).toMatch(/too many open requests/);
    const [first] = await Promise.all(long);
    expect(first?.status).toBe(202);
    // Both ended: slots are free again.
    expect((await pexec(gw.url, path, simpleRequest(), { 'nvcf-poll-seconds': '1' })).status).toBe(202);
  });

  it('the rate limit counts status polls as well as invocations', async () => {
    const gw = await h.gateway({ RATE_LIMIT_PER_MINUTE: '3' });
    // Eight calls span at most two minute windows: one of them holds more than three.
    const unknown = `${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-000000000001`;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await gfetch(unknown, { headers: { 'nvcf-poll-seconds': '1' } })).status);
    expect(statuses).toContain(429);
    expect(statuses.every((s) => s === 404 || s === 429)).toBe(true);
  });
});
