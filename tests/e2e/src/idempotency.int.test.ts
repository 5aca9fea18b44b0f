import { connect } from 'node:net';
import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

/**
 * `Idempotency-Key` on pexec and exec: a retry of the same call (same key, same body, same principal)
 * finds the request the first call started — the function runs once — and the same key with another
 * body is a 422.
 */
let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; no worker runs until a test starts one
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const path = `/v2/nvcf/pexec/functions/${fnId('simple')}`;

/** Sends a whole pexec request on a raw socket and hangs up without reading a byte of the answer. */
function sendAndDrop(key: string, body: string): Promise<void> {
  const u = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.end(
        `POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
          `Content-Type: application/json\r\nIdempotency-Key: "${key}"\r\nNVCF-POLL-SECONDS: 30\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        () => {
          socket.destroy();
          resolve();
        },
      );
    });
    socket.on('error', reject);
  });
}

async function queued(): Promise<number> {
  const res = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}`);
  return ((await res.json()) as { queues: { queueDepth: number }[] }).queues[0]?.queueDepth ?? 0;
}

async function executions(worker: RunningWorker): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${worker.ports.http}/v2/models/simple/stats`);
  const stats = (await res.json()) as { model_stats: { inference_stats: { success: { count: number } } }[] };
  return stats.model_stats.reduce((n, m) => n + m.inference_stats.success.count, 0);
}

describe('Idempotency-Key', () => {
  it('a client that retries after a dropped connection gets the same request; the function runs once', async () => {
    const body = JSON.stringify(simpleRequest({ id: 'idem-1' }));
    await sendAndDrop('retry-after-drop-1', body);
    // The dropped call was accepted: its job waits (no worker runs).
    for (let i = 0; i < 200 && (await queued()) < 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await queued()).toBe(1);
    const retry = await pexec(gw.url, path, body, {
      'idempotency-key': '"retry-after-drop-1"',
      'nvcf-poll-seconds': '1',
    });
    expect(retry.status).toBe(202);
    const reqId = retry.headers.get('nvcf-reqid') ?? '';
    expect(await queued()).toBe(1); // nothing new was queued
    const again = await pexec(gw.url, path, body, {
      'idempotency-key': 'retry-after-drop-1',
      'nvcf-poll-seconds': '1',
    });
    expect(again.headers.get('nvcf-reqid')).toBe(reqId);

    const worker = await h.worker();
    const done = await pexec(gw.url, path, body, {
      'idempotency-key': 'retry-after-drop-1',
      'nvcf-poll-seconds': '30',
    });
    expect(done.status).toBe(200);
    expect(done.headers.get('nvcf-reqid')).toBe(reqId);
    expect(((await done.json()) as { id: string }).id).toBe('idem-1');
    expect(await executions(worker)).toBe(1);
    await worker.close();
  });

  it('the same key with a different body is a 422; another principal’s same key is its own', async () => {
    const first = await pexec(gw.url, path, simpleRequest({ id: 'a' }), {
      'idempotency-key': 'k-422',
      'nvcf-poll-seconds': '1',
    });
    expect(first.status).toBe(202);
    const other = await pexec(gw.url, path, simpleRequest({ id: 'b' }), { 'idempotency-key': 'k-422' });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await other.json()) as { detail: string }).detail).toMatch(/Idempotency-Key was already used/);

    const { key } = await createApiKeyStore(h.redis, createKeys(h.keyPrefix)).create({
      name: 'someone-else',
      scopes: ['invoke_function'],
    });
    const theirs = await pexec(gw.url, path, simpleRequest({ id: 'b' }), {
      authorization: `Bearer ${key}`,
      'idempotency-key': 'k-422',
      'nvcf-poll-seconds': '1',
    });
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get('nvcf-reqid')).not.toBe(first.headers.get('nvcf-reqid'));

    const bad = await pexec(gw.url, path, simpleRequest(), { 'idempotency-key': '' });
    expect(bad.status).toBe(400);
    const worker = await h.worker(); // drain
    await worker.close();
  });

  it('exec honours it too', async () => {
    const worker = await h.worker();
    const body = JSON.stringify({ requestHeader: { pollDurationSeconds: 30 }, requestBody: simpleRequest() });
    const call = () =>
      gfetch(`${gw.url}/v2/nvcf/exec/functions/${fnId('simple')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'exec-1' },
        body,
      });
    const before = await executions(worker);
    const res = await call();
    expect(res.status).toBe(200);
    const { reqId } = (await res.json()) as { reqId: string };
    // Delivered already: the retry names the same request, which answers 404 (delivered once).
    const retry = await call();
    expect(retry.status).toBe(404);
    expect(retry.headers.get('nvcf-reqid')).toBe(reqId);
    expect(await executions(worker)).toBe(before + 1);
    await worker.close();
  });
});
