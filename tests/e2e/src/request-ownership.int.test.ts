import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createEventStream, createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, simpleRequest } from './harness.ts';

/**
 * A request belongs to the credential that made it (and to an admin): another credential with the same
 * scope can neither take its result, nor read its stream or position, nor cancel it; to it the request id is
 * answered exactly as an unknown one.
 */
let h: Harness;
let gw: RunningGateway;
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; no worker runs until a test starts one
  gw = await h.gateway();
  const keys = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
  const scopes = ['invoke_function', 'queue_details'] as const;
  alice = (await keys.create({ name: 'alice', scopes: [...scopes] })).key;
  bob = (await keys.create({ name: 'bob', scopes: [...scopes] })).key;
});
afterAll(async () => {
  await h?.close();
});

const as = (key: string, headers: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...headers });

async function accepted(key: string): Promise<string> {
  const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
    method: 'POST',
    headers: as(key, { 'content-type': 'application/json', 'nvcf-poll-seconds': '1' }),
    body: JSON.stringify(simpleRequest()),
  });
  expect(res.status).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
}

/** Status, headers that tell anything, and body, with the request id written as `<id>`. */
async function answer(res: Response, requestId: string) {
  const id = (text: string | null) => text?.replaceAll(requestId, '<id>');
  const headers = ['content-type', 'nvcf-status', 'nvcf-reqid'].map((h) => [h, id(res.headers.get(h))]);
  return { status: res.status, headers, body: id(await res.text()) };
}

describe('a request belongs to whoever made it', () => {
  it('to another credential it is an unknown request (poll, stream, position, cancel); the owner still gets the result', async () => {
    const reqId = await accepted(alice);
    const unknown = crypto.randomUUID();
    const surfaces: [string, (id: string) => string, Record<string, string>][] = [
      ['GET', (id) => `/v2/nvcf/pexec/status/${id}`, {}],
      ['GET', (id) => `/v2/nvcf/pexec/status/${id}`, { accept: 'text/event-stream' }],
      ['GET', (id) => `/v2/nvcf/exec/status/${id}`, {}],
      ['GET', (id) => `/v2/nvcf/queues/${id}/position`, {}],
      ['DELETE', (id) => `/v2/nvcf/pexec/status/${id}`, {}],
    ];
    for (const [method, path, headers] of surfaces) {
      const at = async (id: string) =>
        answer(await fetch(`${gw.url}${path(id)}`, { method, headers: as(bob, headers) }), id);
      const theirs = await at(reqId);
      expect(theirs.status, `${method} ${path('')}`).toBe(404);
      expect(theirs, `${method} ${path('')}`).toEqual(await at(unknown));
    }
    expect((await fetch(`${gw.url}/v2/nvcf/queues/${reqId}/position`, { headers: as(alice) })).status).toBe(200);
    const worker = await h.worker();
    const mine = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: as(alice, { 'nvcf-poll-seconds': '30' }),
    });
    expect(mine.status).toBe(200);
    await worker.close();
  });

  it('an admin may read any request', async () => {
    const reqId = await accepted(alice);
    const worker = await h.worker();
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: as(ADMIN_KEY, { 'nvcf-poll-seconds': '30' }),
    });
    expect(res.status).toBe(200);
    await worker.close();
  });

  it('a follower leaving a stream does not cancel the generation; the stream that started it does', async () => {
    const worker = await h.worker();
    const events = createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
    const started = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: as(alice, { 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify({ prompt: 'H', max_tokens: 64 }),
    });
    expect(started.status).toBe(200);
    const reqId = started.headers.get('nvcf-reqid') ?? '';
    // The admin follows the same request and hangs up after its first bytes.
    const follower = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: as(ADMIN_KEY, { accept: 'text/event-stream' }),
    });
    expect(follower.status).toBe(200);
    const reader = follower.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    const text = await started.text();
    expect(text).toContain('data: [DONE]');
    // Give a (wrong) cancel every chance to land, then look: nothing asked the worker to stop.
    await new Promise((r) => setTimeout(r, 200));
    expect(await events.isCancelled(reqId)).toBe(false);
    expect(text).not.toContain('"finish_reason":"cancelled"');

    // The starting stream leaving does cancel.
    const ac = new AbortController();
    const own = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: as(alice, { 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify({ prompt: 'H', max_tokens: 4096 }),
      signal: ac.signal,
    });
    const ownId = own.headers.get('nvcf-reqid') ?? '';
    const ownReader = own.body?.getReader();
    await ownReader?.read();
    ac.abort();
    const deadline = Date.now() + 10_000;
    while (!(await events.isCancelled(ownId)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await events.isCancelled(ownId)).toBe(true);
    await worker.close();
  });
});
