import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys, WORKERS_GROUP } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  adminAuth,
  createHarness,
  fnId,
  gfetch,
  type Harness,
  pexec,
  simpleRequest,
  verId,
} from './harness.ts';
import { createRunGate, heldRequest } from './held-model.ts';

/**
 * `DELETE /v2/nvcf/pexec/status/{reqId}`: the owner cancels a queued or running request. Every reader of it
 * gets a 499 problem from then on; a queued job leaves the queue; a running one hears it as it hears a
 * streaming client leave.
 */
let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness({ heldModel: true, tritonExamples: true });
  await (await h.worker()).close(); // functions published; no worker runs until a test starts one
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const keys = () => createKeys(h.keyPrefix);
const cancel = (reqId: string, key = ADMIN_KEY) =>
  fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
const poll = (reqId: string, seconds: number) =>
  gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': String(seconds) } });

async function accepted(path: string, body: object): Promise<string> {
  const res = await pexec(gw.url, path, body, { 'nvcf-poll-seconds': '1' });
  expect(res.status).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
}

/**
 * The number of answers that reached the request's record, stored or discarded: a worker's run that ended, and
 * the cancel's own.
 */
const runs = async (reqId: string) => Number((await h.redis.hget(keys().request(reqId), 'runs')) ?? 0);
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function expectCancelled(res: Response, reqId: string): Promise<void> {
  expect(res.status).toBe(499);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(res.headers.get('nvcf-reqid')).toBe(reqId);
  expect(await res.json()).toMatchObject({
    title: 'Client Closed Request',
    status: 499,
    detail: `request '${reqId}' was cancelled by its owner`,
    requestId: reqId,
  });
}

describe('cancelling a request', () => {
  it('a queued request leaves the queue, a waiting long-poll gets the 499 at once, no worker runs it', async () => {
    const simple = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
    const reqId = await accepted(simple, simpleRequest());
    const depth = async () => {
      const res = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}`);
      return ((await res.json()) as { queues: { queueDepth: number }[] }).queues[0]?.queueDepth;
    };
    expect(await depth()).toBe(1);
    // A long poll already waiting is answered by the cancel, not by its window's end (past the test's timeout).
    const waiting = poll(reqId, 120);
    const res = await cancel(reqId);
    expect(res.status).toBe(204);
    expect(res.headers.get('nvcf-reqid')).toBe(reqId);
    await expectCancelled(await waiting, reqId);
    expect(await depth()).toBe(0);
    // Its record is delivered now: a second cancel is too late, an unknown id is unknown, a bad one is refused.
    expect((await cancel(reqId)).status).toBe(409);
    expect((await cancel('00000000-0000-4000-8000-00000000dead')).status).toBe(404);
    const bad = await cancel('not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/problem\+json/);
    // A worker that starts now finds nothing of it to run.
    const before = await runs(reqId);
    const worker = await h.worker();
    const next = await pexec(gw.url, simple, simpleRequest(), { 'nvcf-poll-seconds': '30' });
    await worker.close();
    expect(next.status).toBe(200);
    expect(await runs(reqId)).toBe(before);
  });

  it('only its owner (or an admin) may cancel a request; a finished one is not cancelled', async () => {
    const store = createApiKeyStore(h.redis, keys());
    const alice = (await store.create({ name: 'alice', scopes: ['invoke_function'] })).key;
    const bob = (await store.create({ name: 'bob', scopes: ['invoke_function'] })).key;
    const reader = (await store.create({ name: 'reader', scopes: ['list_functions'] })).key;
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', 'nvcf-poll-seconds': '1' },
      body: JSON.stringify(simpleRequest()),
    });
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    // Another credential's request is unknown to it; a credential without the scope is refused outright.
    const notFound = await cancel(reqId, bob);
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as { detail: string }).detail).toBe(
      `Request '${reqId}' not found (unknown, expired or already delivered)`,
    );
    expect((await cancel(reqId, reader)).status).toBe(403);
    expect((await cancel(reqId, alice)).status).toBe(204);

    // Answered but not yet read: the answer stays, the cancel is refused.
    const done = await accepted(`/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest());
    const worker = await h.worker();
    await until(async () => (await h.redis.hget(keys().request(done), 'state')) === 'fulfilled', 'the answer');
    const refused = await cancel(done);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { detail: string }).detail).toBe(
      `Request '${done}' already finished: it can no longer be cancelled`,
    );
    expect((await poll(done, 1)).status).toBe(200);
    await worker.close();
  });

  it('a running plain model: pollers get the 499 at once, its late answer is discarded', async () => {
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const held = `/v2/nvcf/pexec/functions/${fnId('held')}`;
    const reqId = await accepted(held, heldRequest([1, 2, 3, 4]));
    await gate.entered();
    expect((await cancel(reqId)).status).toBe(204);
    await expectCancelled(await poll(reqId, 1), reqId);
    await gate.open();
    // The run ended (its answer reached the store and was ignored); the worker goes on serving.
    await until(async () => (await runs(reqId)) === 2, 'the held run to finish');
    const next = await pexec(gw.url, held, heldRequest([5, 6, 7, 8]), { 'nvcf-poll-seconds': '30' });
    expect(next.status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('a running decoupled model stops between responses, polled or streamed', async () => {
    const worker = await h.worker();
    // The second response is a minute away: only the cancel can end these runs within the test.
    const slow = {
      inputs: [
        { name: 'IN', datatype: 'INT32', shape: [2], data: [7, 8] },
        { name: 'DELAY', datatype: 'UINT32', shape: [2], data: [0, 60_000] },
        { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [0] },
      ],
    };
    const repeat = `/v2/nvcf/pexec/functions/${fnId('repeat_int32')}`;
    const polled = await accepted(repeat, slow);
    // Running: its job is on the queue's pending list (a worker took it; the record says 'queued' until an answer).
    const stream = keys().queue(verId('repeat_int32')).stream;
    await until(async () => ((await h.redis.xpending(stream, WORKERS_GROUP)) as [number])[0] === 1, 'the run');
    expect((await cancel(polled)).status).toBe(204);
    await until(async () => (await runs(polled)) === 2, 'the polled run to stop');
    await expectCancelled(await poll(polled, 1), polled);

    const streamed = await fetch(`${gw.url}${repeat}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(slow),
    });
    expect(streamed.status).toBe(200);
    const reqId = streamed.headers.get('nvcf-reqid') ?? '';
    const reader = streamed.body?.getReader();
    if (!reader) throw new Error('no body');
    let text = '';
    while (!text.includes('"OUT"')) text += new TextDecoder().decode((await reader.read()).value);
    expect((await cancel(reqId)).status).toBe(204);
    // The stream ends (the cancel's 499, or the model's closing response if it got there first).
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toMatch(/Client Closed Request|"triton_final_response":true/);
    await until(async () => (await runs(reqId)) === 2, 'the streamed run to stop');
    await worker.close();
  });
});
