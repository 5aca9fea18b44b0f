import { createApiKeyStore } from '@nvcf/control-store';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest, verId } from './harness.ts';
import { createRunGate, heldRequest } from './held-model.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ heldModel: true });
  // Publish the functions, then leave no worker running: requests stay queued until a test starts one.
  await (await h.worker()).close();
});
afterAll(async () => {
  await h?.close();
});

const execBody = (requestBody: unknown, pollDurationSeconds?: number) =>
  JSON.stringify({ requestHeader: pollDurationSeconds === undefined ? {} : { pollDurationSeconds }, requestBody });
const exec = (url: string, body: string) =>
  gfetch(`${url}/v2/nvcf/exec/functions/${fnId('simple')}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });

describe('exec envelope (legacy API)', () => {
  it('pending-evaluation while queued, then fulfilled with the response embedded, then 404', async () => {
    const gw = await h.gateway();
    const res = await exec(gw.url, execBody(simpleRequest(), 1));
    expect(res.status).toBe(202);
    const pending = (await res.json()) as { reqId: string; status: string };
    expect(pending.status).toBe('pending-evaluation');
    expect(res.headers.get('nvcf-reqid')).toBe(pending.reqId);
    const again = await gfetch(`${gw.url}/v2/nvcf/exec/status/${pending.reqId}`, {
      headers: { 'nvcf-poll-seconds': '1' },
    });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { status: string }).status).toBe('pending-evaluation');
    const worker = await h.worker();
    const done = await gfetch(`${gw.url}/v2/nvcf/exec/status/${pending.reqId}`, {
      headers: { 'nvcf-poll-seconds': '30' },
    });
    expect(done.status).toBe(200);
    const env = (await done.json()) as {
      reqId: string;
      status: string;
      response: { outputs: { name: string; data: number[] }[] };
    };
    expect(env).toMatchObject({ reqId: pending.reqId, status: 'fulfilled' });
    expect(env.response.outputs.find((o) => o.name === 'OUTPUT0')?.data[15]).toBe(16);
    expect((await gfetch(`${gw.url}/v2/nvcf/exec/status/${pending.reqId}`)).status).toBe(404);

    // A request the model refuses comes back errored, with the HTTP status of the failure.
    const bad = await exec(
      gw.url,
      execBody({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array(16).fill(1) }] }),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()) as object).toMatchObject({
      status: 'errored',
      errorCode: 400,
      response: { status: 400 },
    });
    const invalid = await exec(gw.url, '{"requestHeader": {"pollDurationSeconds": "soon"}}');
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('content-type')).toMatch(/problem\+json/);
    await worker.close();
  });
});

describe('queue details', () => {
  it('reports depth per version and each request’s position, in order; needs queue_details', async () => {
    const gw = await h.gateway();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
        'nvcf-poll-seconds': '1',
      });
      expect(res.status).toBe(202);
      ids.push(res.headers.get('nvcf-reqid') ?? '');
    }
    const q = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}`);
    expect(q.status).toBe(200);
    expect(await q.json()).toEqual({
      functionId: fnId('simple'),
      queues: [
        {
          functionVersionId: verId('simple'),
          functionName: 'simple',
          functionStatus: 'DEPLOYING',
          queueDepth: 3,
        },
      ],
    });
    const one = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}/versions/${verId('simple')}`);
    expect(((await one.json()) as { queues: unknown[] }).queues).toHaveLength(1);
    const positions = [];
    for (const id of ids) {
      const p = await gfetch(`${gw.url}/v2/nvcf/queues/${id}/position`);
      expect(p.status).toBe(200);
      positions.push(((await p.json()) as { positionInQueue: number }).positionInQueue);
    }
    expect(positions).toEqual([0, 1, 2]);
    expect((await gfetch(`${gw.url}/v2/nvcf/queues/functions/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key } = await store.create({ name: 'invoker', scopes: ['invoke_function'] });
    const denied = await fetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('simple')}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(denied.status).toBe(403);
    // Drain them so later tests start from an empty queue.
    const worker = await h.worker();
    for (const id of ids)
      expect(
        (await gfetch(`${gw.url}/v2/nvcf/pexec/status/${id}`, { headers: { 'nvcf-poll-seconds': '30' } })).status,
      ).toBe(200);
    await worker.close();
  });
});

describe('queueDepth, what an autoscaler scales on', () => {
  it('counts a request while it waits and while a worker runs it, until it is answered; a queue_details key reads it', async () => {
    const gw = await h.gateway();
    // What KEDA holds: a key with only queue_details, for this one function.
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key } = await store.create({
      name: 'keda-scaler',
      scopes: ['queue_details'],
      allowedFunctionIds: [fnId('held')],
    });
    const pending = async () => {
      const res = await fetch(`${gw.url}/v2/nvcf/queues/functions/${fnId('held')}/versions/${verId('held')}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { queues: { queueDepth: number }[] }).queues[0]?.queueDepth;
    };
    expect(await pending()).toBe(0);
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('held')}`, heldRequest([1, 2, 3, 4]), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(await pending()).toBe(1); // waiting: no worker runs

    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    await gate.entered();
    // A worker has it (nothing ahead of it, nothing waiting) and it still counts: scaling to zero now would cut it.
    const position = await gfetch(`${gw.url}/v2/nvcf/queues/${reqId}/position`);
    expect(((await position.json()) as { positionInQueue: number }).positionInQueue).toBe(0);
    expect(await pending()).toBe(1);

    await gate.open();
    const done = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '30' } });
    expect(done.status).toBe(200);
    // The job leaves its queue in the script that stores (and announces) the answer: nothing is left by now.
    expect(await pending()).toBe(0);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});

describe('back-pressure', () => {
  it('a full queue answers 429 with Retry-After, and what it accepted still completes', async () => {
    const gw = await h.gateway({ MAX_QUEUE_DEPTH: '2' });
    const accepted: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
        'nvcf-poll-seconds': '1',
      });
      expect(res.status).toBe(202);
      accepted.push(res.headers.get('nvcf-reqid') ?? '');
    }
    // The guard reads the depth at most every 250 ms: wait so it sees the two queued requests.
    await new Promise((r) => setTimeout(r, 300));
    const full = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(((await full.json()) as { detail: string }).detail).toMatch(/queue .* is full/);
    const worker = await h.worker();
    for (const id of accepted) {
      expect(
        (await gfetch(`${gw.url}/v2/nvcf/pexec/status/${id}`, { headers: { 'nvcf-poll-seconds': '30' } })).status,
      ).toBe(200);
    }
    await worker.close();
  });

  it('a credential over its rate answers 429 with Retry-After, for polls too', async () => {
    const gw = await h.gateway({ RATE_LIMIT_PER_MINUTE: '3' });
    const worker = await h.worker();
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key } = await store.create({ name: 'limited', scopes: ['invoke_function'] });
    const auth = { authorization: `Bearer ${key}` };
    // Windows are whole minutes: don't straddle a boundary.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 57_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(simpleRequest()),
      });
      statuses.push(res.status);
      if (res.status === 429) {
        const after = Number(res.headers.get('retry-after'));
        expect(after).toBeGreaterThanOrEqual(1);
        expect(after).toBeLessThanOrEqual(61);
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Polls and streams count too: a client polling in a tight loop is held to the same budget.
    const poll = await fetch(`${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-000000000000`, { headers: auth });
    expect(poll.status).toBe(429);
    await worker.close();
  });
});
