import type { RunningGateway } from '@nvcf/gateway';
import { createEventStream, createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  it('holds the response until the first event, then sends the single result as one event and ends', async () => {
    const responding = fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(simpleRequest({ id: 'sse' })),
    });
    // No worker yet: nothing is answered (a refusal must still be able to be a 4xx).
    const early = await Promise.race([responding.then(() => 'answered'), sleep(300).then(() => 'waiting')]);
    expect(early).toBe('waiting');
    const worker = await h.worker();
    const res = await responding;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('nvcf-status')).toBe('fulfilled');
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads an SSE body as it arrives: each event's data with the time it came. */
async function readEvents(
  res: Response,
  onEvent?: (data: string, n: number) => boolean,
): Promise<{ data: string; at: number }[]> {
  const out: { data: string; at: number }[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = raw
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) {
        out.push({ data, at: performance.now() });
        if (onEvent && !onEvent(data, out.length)) {
          await reader.cancel();
          return out;
        }
      }
      cut = buffer.indexOf('\n\n');
    }
  }
  return out;
}

describe('a generative function', () => {
  const generate = (body: object, accept?: string, signal?: AbortSignal) =>
    fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });

  it('streams one OpenAI-style chat chunk per token as it is generated, then [DONE]', async () => {
    const worker = await h.worker();
    const res = await generate({ messages: [{ role: 'user', content: 'H' }], max_tokens: 300 }, 'text/event-stream');
    expect(res.status).toBe(200);
    const events = await readEvents(res);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(
      (e) =>
        JSON.parse(e.data) as {
          object: string;
          choices: { delta: { content?: string }; finish_reason: string | null }[];
        },
    );
    expect(chunks).toHaveLength(301);
    expect(chunks[0]?.object).toBe('chat.completion.chunk');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text.slice(0, 12)).toBe('i,NVCF! Hi,N');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
    // Events arrive while the function still runs, not all at its end.
    const first = events[0]?.at ?? 0;
    const last = events.at(-1)?.at ?? 0;
    expect(last - first).toBeGreaterThan(20);

    const whole = await generate({ messages: [{ role: 'user', content: 'H' }], max_tokens: 9 });
    expect(whole.status).toBe(200);
    const completion = (await whole.json()) as { object: string; choices: { message: { content: string } }[] };
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('i,NVCF! H');
    await worker.close();
  });

  it("answers a prompt in OpenAI's completions shape, streamed and whole (garak's and LangChain's calls)", async () => {
    const worker = await h.worker();
    const res = await generate({ prompt: 'H', max_tokens: 5, stream: true }, 'text/event-stream');
    expect(res.status).toBe(200);
    const events = await readEvents(res);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.data) as { object: string; choices: { text: string; finish_reason: string | null }[] });
    expect(chunks.map((c) => c.object)).toEqual(Array(6).fill('text_completion'));
    expect(chunks.map((c) => c.choices[0]?.text).join('')).toBe('i,NVC');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');

    // garak's NVCF completion generator: sampling settings, stream false, reads choices[].text.
    const whole = await generate({ prompt: 'H', temperature: 0.1, top_p: 0.7, max_tokens: 9, stream: false });
    expect(whole.status).toBe(200);
    expect(await whole.json()).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: 'i,NVCF! H', finish_reason: 'length' }],
      usage: { prompt_tokens: 1, completion_tokens: 9, total_tokens: 10 },
    });
    await worker.close();
  });

  it('a client that disconnects stops the generation (no resume grace)', async () => {
    const worker = await h.worker();
    const impatient = await h.gateway({ STREAM_RESUME_GRACE_MS: '0' });
    const ac = new AbortController();
    const res = await fetch(`${impatient.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'H', max_tokens: 4000 }),
      signal: ac.signal,
    });
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    await readEvents(res, (_d, n) => n < 5).catch(() => []);
    ac.abort();
    const events = createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
    let all: { data: string; last: boolean }[] = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      all = await events.read(reqId, '0', 10_000);
      if (all.at(-1)?.last) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(all.at(-1)).toMatchObject({ data: '[DONE]', last: true });
    const finish = JSON.parse(all.at(-2)?.data ?? '{}') as { choices: { finish_reason: string }[] };
    expect(finish.choices[0]?.finish_reason).toBe('cancelled');
    expect(all.length).toBeLessThan(4000);
    await worker.close();
  });
});

describe('a stream served by another gateway', () => {
  it('reads every event of a generation another gateway accepted, late, to the end', async () => {
    const b = await h.gateway();
    const worker = await h.worker();
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'H', max_tokens: 50 }),
    });
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const viaA = await readEvents(res);
    const viaB = await readEvents(
      await fetch(`${b.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { ...adminAuth, accept: 'text/event-stream' } }),
    );
    expect(viaB.map((e) => e.data)).toEqual(viaA.map((e) => e.data));
    expect(viaB.at(-1)?.data).toBe('[DONE]');
    await worker.close();
  });

  it('follows a request that was not started as a stream: its answer is the one event', async () => {
    const b = await h.gateway();
    const accepted = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', 'nvcf-poll-seconds': '1' },
      body: JSON.stringify(simpleRequest()),
    });
    expect(accepted.status).toBe(202);
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';
    const following = fetch(`${b.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    const worker = await h.worker();
    const events = await readEvents(await following);
    expect(events).toHaveLength(1);
    expect((JSON.parse(events[0]?.data ?? '{}') as { outputs: { data: number[] }[] }).outputs[0]?.data[15]).toBe(16);
    await worker.close();
  });
});

describe('a stopping gateway', () => {
  it('lets an open stream finish, and cuts one that outlives the grace', async () => {
    const worker = await h.worker();
    const graceful = await h.gateway({ GATEWAY_SHUTDOWN_GRACE_MS: '20000' });
    const res = await fetch(`${graceful.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'H', max_tokens: 400 }),
    });
    const reading = readEvents(res);
    const closing = graceful.close();
    const events = await reading;
    await closing;
    expect(events.at(-1)?.data).toBe('[DONE]');
    expect(events).toHaveLength(402);
    await worker.close();

    // A started stream whose function never ends it: the grace cuts it.
    const strict = await h.gateway({ GATEWAY_SHUTDOWN_GRACE_MS: '300' });
    const endless = '00000000-0000-4000-8000-00000000e0e0';
    await createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 }).append(endless, [{ data: 'only' }]);
    const open = await fetch(`${strict.url}/v2/nvcf/pexec/status/${endless}`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    expect(open.status).toBe(200);
    const received: string[] = [];
    const cut = readEvents(open, (d) => {
      received.push(d);
      return true;
    }).catch(() => []);
    // A stream that has not started (no worker runs) is a long-poll: it answers 202 at once.
    const waiting = fetch(`${strict.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'H', max_tokens: 5 }),
    });
    await untilQueued('generative', 1);
    while (received.length === 0) await sleep(10);
    const t0 = Date.now();
    await strict.close();
    expect(Date.now() - t0).toBeLessThan(5000);
    await cut;
    expect(received).toEqual(['only']);
    const answered = await waiting;
    expect(answered.status).toBe(202);
    expect(answered.headers.get('nvcf-reqid')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/** Waits until `depth` requests wait in the function's queue (they reached the gateway). */
async function untilQueued(model: string, depth: number): Promise<void> {
  for (;;) {
    const res = await gfetch(`${gw.url}/v2/nvcf/queues/functions/${fnId(model)}`);
    const { queues } = (await res.json()) as { queues: { queueDepth: number }[] };
    if ((queues[0]?.queueDepth ?? 0) >= depth) return;
    await sleep(20);
  }
}

describe('a large batch to a streaming client', () => {
  it('arrives as one event per chunk of rows (STREAM_CHUNK_ROWS, 16), together equal to the whole answer', async () => {
    const worker = await h.worker();
    const rows = 40;
    const data = Array.from({ length: rows * 784 }, (_, i) => (i % 29) / 29);
    const body = { inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [rows, 784], data }] };
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('classifier')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
    });
    const events = await readEvents(res);
    const parts = events.map((e) => JSON.parse(e.data) as { outputs: { shape: number[]; data: number[] }[] });
    expect(parts.map((p) => p.outputs[0]?.shape)).toEqual([
      [16, 10],
      [16, 10],
      [8, 10],
    ]);
    const whole = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('classifier')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const all = ((await whole.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data;
    expect(parts.flatMap((p) => p.outputs[0]?.data ?? [])).toEqual(all);
    await worker.close();
  });
});

describe('the per-event size cap', () => {
  it('an event over 4 MiB is not sent: the stream ends with an error event saying why', async () => {
    const reqId = '00000000-0000-4000-8000-00000000e4e4';
    const events = createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
    await events.append(reqId, [{ data: 'small' }, { data: 'x'.repeat(4 * 1024 * 1024 + 1), last: true }]);
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    const text = await res.text();
    expect(text).toContain('data: small');
    expect(text).toMatch(/event: error\ndata: \{"error":"event exceeds the 4194304-byte limit/);
    expect(text.length).toBeLessThan(10_000);
  });
});

describe('a refusal is an HTTP status, not a stream event', () => {
  const streamCall = (fn: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId(fn)}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  it('a request refused before any output answers the 4xx and problem+json of the same call without SSE', async () => {
    const worker = await h.worker();
    const streamed = await streamCall('generative', { prompt: 'H', max_tokens: -1 });
    const plain = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'H', max_tokens: -1 }),
    });
    for (const res of [streamed, plain]) {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('nvcf-reqid')).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('nvcf-status')).toBe('errored');
    }
    const a = (await streamed.json()) as Record<string, unknown>;
    const b = (await plain.json()) as Record<string, unknown>;
    expect(a.detail).toMatch(/max_tokens|too small|>=1/i);
    expect({ ...a, requestId: '', instance: '' }).toEqual({ ...b, requestId: '', instance: '' });
    // The same for a model that refuses its input (a KServe V2 400 from the worker).
    const wrongType = await streamCall('simple', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array(16).fill(1) }],
    });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { detail: string }).detail).toMatch(/data-type is 'FP32'/);
    await worker.close();
  });

  it('a failure after the stream started is an `event: error` with the problem+json, and the end', async () => {
    const reqId = '00000000-0000-4000-8000-0000000e7707';
    const events = createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
    const problem = JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 });
    await events.append(reqId, [{ data: 'first' }, { data: problem, last: true, error: true }]);
    const res = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^data: first\nid: [0-9-]+\n\n/);
    expect(text).toContain(`event: error\ndata: ${problem}\n`);
  });

  it('a window that closes before the first event answers 202 with the request id; an unknown id 404', async () => {
    const res = await streamCall('simple', simpleRequest(), { 'nvcf-poll-seconds': '1' });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('nvcf-status')).toBe('in-progress');
    // The request runs on: a stream opened on it later gets its answer as the one event.
    const following = fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    const worker = await h.worker();
    const events = await readEvents(await following);
    expect(events).toHaveLength(1);
    await worker.close();

    const unknown = await fetch(`${gw.url}/v2/nvcf/pexec/status/00000000-0000-4000-8000-00000000dead`, {
      headers: { ...adminAuth, accept: 'text/event-stream' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
