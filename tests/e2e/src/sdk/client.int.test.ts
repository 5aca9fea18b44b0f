import { NvcfClient, NvcfError } from '@nvcf/client';
import { startCuttingProxy } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness } from '../harness.ts';
import { createRunGate, heldRequest } from '../held-model.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ heldModel: true });
});
afterAll(async () => {
  await h?.close();
});

const simpleBody = {
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
  ],
};
interface Outputs {
  outputs: { name: string; data: number[] }[];
}
const sums = Array.from({ length: 16 }, (_, i) => i + 1);

/** A fetch that records each answer's status, so a test can see what the client went through. */
function recordingFetch(seen: number[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    seen.push(res.status);
    return res;
  };
}

describe('invoke', () => {
  it('answers 200 with the function’s body and request id; a refusal throws NvcfError with the problem', async () => {
    const gw = await h.gateway();
    const worker = await h.worker();
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const answer = await nvcf.invoke(fnId('simple'), simpleBody);
    expect(answer.status).toBe(200);
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.json<Outputs>().outputs[0]?.data).toEqual(sums);

    const refused = await nvcf.invoke(fnId('simple'), { inputs: [] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NvcfError);
    const err = refused as NvcfError;
    expect(err.status).toBe(400);
    expect(err.isClientError).toBe(true);
    expect(err.detail).toMatch(/input/);
    expect(err.requestId).toMatch(/^[0-9a-f-]{36}$/);

    const unauthorized = new NvcfClient({ baseUrl: gw.url, apiKey: 'nvapi-wrong' });
    await expect(unauthorized.invoke(fnId('simple'), simpleBody)).rejects.toMatchObject({ status: 401 });
    await worker.close();
  });

  it('a result over the direct limit: follows the 302 and returns the <reqId>.response inside the zip', async () => {
    const gw = await h.gateway();
    const worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const answer = await nvcf.invoke(fnId('simple'), simpleBody);
    expect(answer.fromLargeResult).toBe(true);
    expect(answer.json<Outputs>().outputs[0]?.data).toEqual(sums);
    await worker.close();
  });
});

describe('invoke while the function runs (a gated worker holds the run)', () => {
  it('on 202 reports progress and long-polls the status route until the answer', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const progress: { requestId: string; percent: number }[] = [];
    let pending!: () => void;
    const sawPending = new Promise<void>((r) => {
      pending = r;
    });
    const answer = nvcf.invoke(fnId('held'), heldRequest([1, 2, 3, 4]), {
      pollSeconds: 1,
      onProgress: (p) => {
        progress.push(p);
        pending();
      },
    });
    await sawPending;
    await gate.open();
    const done = await answer;
    expect(done.json<Outputs>().outputs[0]?.data).toEqual([1, 2, 3, 4]);
    expect(progress[0]).toEqual({ requestId: done.requestId, percent: 0 });
    worker.child.kill('SIGTERM');
    await worker.exited;
  });

  it('a 429 with Retry-After (one open long poll per credential) is waited out and retried', async () => {
    const gw = await h.gateway({ MAX_OPEN_REQUESTS_PER_CREDENTIAL: '1' });
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const seen: number[] = [];
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY, fetch: recordingFetch(seen) });
    const first = nvcf.invoke(fnId('held'), heldRequest([1, 1, 1, 1]), { pollSeconds: 30 });
    await gate.entered();
    const second = nvcf.invoke(fnId('simple'), simpleBody, { pollSeconds: 30 });
    while (!seen.includes(429)) await new Promise((r) => setTimeout(r, 10));
    await gate.open();
    expect((await first).status).toBe(200);
    expect((await second).json<Outputs>().outputs[0]?.data).toEqual(sums);
    worker.child.kill('SIGTERM');
    await worker.exited;
  });

  it('a connection dropped mid-poll is polled again, and the answer still arrives', async () => {
    const gw = await h.gateway();
    const { port } = new URL(gw.url);
    const proxy = await startCuttingProxy(
      { host: '127.0.0.1', port: Number(port) },
      { matches: (head) => head.startsWith('GET /v2/nvcf/pexec/status/'), afterResponseBytes: 0 },
    );
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const nvcf = new NvcfClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retry: { baseDelayMs: 10 } });
    const answer = nvcf.invoke(fnId('held'), heldRequest([4, 3, 2, 1]), { pollSeconds: 1 });
    while (proxy.cuts === 0) await new Promise((r) => setTimeout(r, 10));
    await gate.open();
    expect((await answer).json<Outputs>().outputs[0]?.data).toEqual([4, 3, 2, 1]);
    expect(proxy.cuts).toBe(1);
    await proxy.close();
    worker.child.kill('SIGTERM');
    await worker.exited;
  });

  it('an aborted signal stops waiting at once', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const stop = new AbortController();
    const answer = nvcf.invoke(fnId('held'), heldRequest([0, 0, 0, 0]), { pollSeconds: 30, signal: stop.signal });
    await gate.entered();
    stop.abort(new Error('user gave up'));
    await expect(answer).rejects.toThrow('user gave up');
    await gate.open();
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
});

describe('stream', () => {
  it('iterates over a generation’s events as they come, and a one-answer function is one event', async () => {
    const gw = await h.gateway();
    const worker = await h.worker();
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const events = [];
    for await (const e of nvcf.stream(fnId('generative'), { prompt: 'H', max_tokens: 5 })) events.push(e);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const text = events
      .slice(0, -2)
      .map((e) => (JSON.parse(e.data) as { choices: { text: string }[] }).choices[0]?.text)
      .join('');
    expect(text).toBe('i,NVC');
    expect(events.every((e) => e.id !== undefined)).toBe(true);

    const once = [];
    for await (const e of nvcf.stream(fnId('simple'), simpleBody)) once.push(e);
    expect(once).toHaveLength(1);
    expect((JSON.parse(once[0]?.data ?? '{}') as Outputs).outputs[0]?.data).toEqual(sums);
    await worker.close();
  });

  it('a stream cut mid-way is resumed with Last-Event-ID: every event once, in order, to [DONE]', async () => {
    const gw = await h.gateway();
    const worker = await h.worker();
    const { port } = new URL(gw.url);
    const body = { prompt: 'H', max_tokens: 200 };
    const whole = [];
    const direct = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    for await (const e of direct.stream(fnId('generative'), body)) whole.push(e.data);
    // Cut the invocation's own connection once a few kilobytes of events went through.
    const proxy = await startCuttingProxy(
      { host: '127.0.0.1', port: Number(port) },
      { matches: (head) => head.startsWith('POST /v2/nvcf/pexec/functions/'), afterResponseBytes: 4096 },
    );
    const nvcf = new NvcfClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retry: { baseDelayMs: 10 } });
    const resumed = [];
    const ids: string[] = [];
    for await (const e of nvcf.stream(fnId('generative'), body)) {
      resumed.push(e.data);
      if (e.id) ids.push(e.id);
    }
    expect(proxy.cuts).toBe(1);
    const withoutIds = (events: string[]) =>
      events.map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as { choices: unknown }).choices));
    expect(withoutIds(resumed)).toEqual(withoutIds(whole));
    expect(new Set(ids).size).toBe(ids.length);
    await proxy.close();
    await worker.close();
  });
});
