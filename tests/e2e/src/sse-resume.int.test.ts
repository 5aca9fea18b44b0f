import type { RunningGateway } from '@nvcf/gateway';
import { createEventStream, createKeys, createRequestStore } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, type Harness, verId } from './harness.ts';

/**
 * `Last-Event-ID` on `GET /v2/nvcf/pexec/status/{reqId}` (Accept: text/event-stream): a client whose
 * stream dropped reconnects and gets exactly the events after the last one it had, then the end.
 */
let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // publish the functions; no worker runs until a test starts one
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

interface Sse {
  id?: string;
  event?: string;
  data: string;
}

/** Yields an SSE body's events as they arrive; leaving the loop early cancels the body. */
async function* sseEvents(res: Response): AsyncGenerator<Sse> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const lines = buffer.slice(0, cut).split('\n');
        buffer = buffer.slice(cut + 2);
        const field = (name: string) =>
          lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).trimStart());
        const data = field('data');
        if (data.length === 0) continue;
        const [id] = field('id');
        const [event] = field('event');
        yield { data: data.join('\n'), ...(id ? { id } : {}), ...(event ? { event } : {}) };
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Every event to the end, or the first `count` (then the body is cancelled). */
async function readSse(res: Response, count = Number.POSITIVE_INFINITY): Promise<Sse[]> {
  const out: Sse[] = [];
  if (count <= 0) return out;
  for await (const e of sseEvents(res)) {
    out.push(e);
    if (out.length >= count) break;
  }
  return out;
}

const follow = (reqId: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
    headers: { ...adminAuth, accept: 'text/event-stream', ...headers },
    ...(signal ? { signal } : {}),
  });

/** Stream ids compare as (ms, seq) pairs. */
const idKey = (id = '') => id.split('-').map(BigInt) as [bigint, bigint];
function expectIncreasingIds(events: Sse[]): void {
  for (let i = 1; i < events.length; i++) {
    const [a, b] = [idKey(events[i - 1]?.id), idKey(events[i]?.id)];
    expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `${events[i - 1]?.id} < ${events[i]?.id}`).toBe(true);
  }
}

/** The generated text of OpenAI chat chunks (the events before `[DONE]`). */
function chatText(events: Sse[]): string {
  return events
    .filter((e) => e.data !== '[DONE]')
    .map((e) => (JSON.parse(e.data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
}

const events = () => createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
const requests = () => createRequestStore(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });

describe('Last-Event-ID on the status stream', () => {
  it('a follower cut mid-stream resumes with exactly the rest of a real generation', async () => {
    const worker = await h.worker();
    const tokens = 400;
    // The stream that started the request is read to its end (cutting it would cancel the generation).
    const started = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`, {
      method: 'POST',
      headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'H' }], max_tokens: tokens }),
    });
    expect(started.status).toBe(200);
    const reqId = started.headers.get('nvcf-reqid') ?? '';
    const uninterrupted = readSse(started);

    // A follower reads a few events through a real connection, then the connection is cut.
    const ac = new AbortController();
    const head = await readSse(await follow(reqId, {}, ac.signal), 5);
    ac.abort();
    expect(head).toHaveLength(5);

    const resumed = await follow(reqId, { 'last-event-id': head.at(-1)?.id ?? '' });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const rest = await readSse(resumed);

    const whole = await uninterrupted;
    expect(whole).toHaveLength(tokens + 2); // a chunk per token, the finish chunk, [DONE]
    expect([...head, ...rest]).toEqual(whole);
    expectIncreasingIds(whole);
    expect(chatText(whole)).toBe('i,NVCF! H'.repeat(Math.ceil(tokens / 9)).slice(0, tokens));
    expect(rest.at(-1)?.data).toBe('[DONE]');

    // The function has finished and its result was handed out (the streams took it): its events are
    // still in Redis (request TTL), so the same reconnect still gets the same rest.
    expect(await readSse(await follow(reqId, { 'last-event-id': head.at(-1)?.id ?? '' }))).toEqual(rest);
    // Resuming after the last event: a stream that simply ends — no event, not the result again.
    const done = await follow(reqId, { 'last-event-id': whole.at(-1)?.id ?? '' });
    expect(done.status).toBe(200);
    expect(done.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await done.text()).toBe('');
    // A malformed id reads from the start.
    expect(await readSse(await follow(reqId, { 'last-event-id': 'not-an-id' }))).toEqual(whole);
    await worker.close();
  });

  it('a reconnect while the function still runs waits for the events that come next', async () => {
    // The function is played by the test: it appends the events, so "still running" holds for certain.
    const reqId = crypto.randomUUID();
    await requests().create(reqId, fnId('generative'), verId('generative'));
    await events().append(reqId, [{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
    const ac = new AbortController();
    const head = await readSse(await follow(reqId, {}, ac.signal), 2);
    ac.abort();
    expect(head.map((e) => e.data)).toEqual(['a', 'b']);

    const resumed = sseEvents(await follow(reqId, { 'last-event-id': head[1]?.id ?? '' }));
    expect((await resumed.next()).value).toMatchObject({ data: 'c' });
    // Nothing more has been produced: the stream waits for it.
    await events().append(reqId, [{ data: 'd' }]);
    expect((await resumed.next()).value).toMatchObject({ data: 'd' });
    await events().append(reqId, [{ data: 'e', last: true }]);
    await requests().complete(reqId, {
      ok: true,
      status: 200,
      contentType: 'application/json',
      body: Buffer.from('{"all":1}'),
    });
    const tail: Sse[] = [];
    for await (const e of resumed) tail.push(e);
    expect(tail.map((e) => e.data)).toEqual(['e']); // then the end; the stored result is not an event
  });

  it('a reconnect before any new event exists holds until the next one', async () => {
    const reqId = crypto.randomUUID();
    await requests().create(reqId, fnId('generative'), verId('generative'));
    await events().append(reqId, [{ data: 'a' }]);
    const [seen] = await readSse(await follow(reqId), 1);
    const resuming = follow(reqId, { 'last-event-id': seen?.id ?? '' });
    const early = await Promise.race([resuming.then(() => 'answered'), sleep(300).then(() => 'waiting')]);
    expect(early).toBe('waiting');
    await events().append(reqId, [{ data: 'b' }, { data: 'c', last: true }]);
    expect((await readSse(await resuming)).map((e) => e.data)).toEqual(['b', 'c']);
  });

  it('resuming after the last event of a finished stream ends with no event, the stored result kept out', async () => {
    const reqId = crypto.randomUUID();
    await requests().create(reqId, fnId('generative'), verId('generative'));
    await events().append(reqId, [{ data: 'a' }, { data: 'b', last: true }]);
    // The result is still stored (no stream took it): a plain resume would have re-sent it as an event.
    await requests().complete(reqId, {
      ok: true,
      status: 200,
      contentType: 'application/json',
      body: Buffer.from('{"x":1}'),
    });
    const all = await events().read(reqId, '0');
    const res = await follow(reqId, { 'last-event-id': all.at(-1)?.id ?? '' });
    expect(res.status).toBe(200);
    expect(res.headers.get('nvcf-reqid')).toBe(reqId);
    expect(await res.text()).toBe('');
    // The same after the record is gone (expired): its events say the stream ended.
    await h.redis.del(createKeys(h.keyPrefix).request(reqId));
    expect(await (await follow(reqId, { 'last-event-id': all.at(-1)?.id ?? '' })).text()).toBe('');
  });

  it('resuming a stream a failure cut short (its answer stored instead) ends with that answer', async () => {
    const reqId = crypto.randomUUID();
    await requests().create(reqId, fnId('generative'), verId('generative'));
    await events().append(reqId, [{ data: 'a' }, { data: 'b' }]);
    const problem = JSON.stringify({ title: 'Internal Server Error', status: 500 });
    await requests().complete(reqId, {
      ok: false,
      code: 'INTERNAL',
      status: 500,
      contentType: 'application/problem+json',
      body: Buffer.from(problem),
    });
    const all = await events().read(reqId, '0');
    const res = await follow(reqId, { 'last-event-id': all.at(-1)?.id ?? '' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`event: error\ndata: ${problem}\n\n`);
  });

  it('a late or resumed reader of a long finished stream gets every page of it (Redis reads 256 at a time)', async () => {
    const reqId = crypto.randomUUID();
    await requests().create(reqId, fnId('generative'), verId('generative'));
    const data = Array.from({ length: 700 }, (_, i) => `e${i}`);
    const following = follow(reqId); // waits for the first event, then reads while the rest lands
    await events().append(reqId, [{ data: data[0] ?? '' }]);
    const reading = following.then((res) => readSse(res));
    await events().append(
      reqId,
      data.slice(1).map((d, i) => ({ data: d, last: i === data.length - 2 })),
    );
    await requests().complete(reqId, {
      ok: true,
      status: 200,
      contentType: 'application/json',
      body: Buffer.from('{"x":1}'),
    });
    const live = await reading;
    expect(live.map((e) => e.data)).toEqual(data); // the stored result is not an extra event
    // Finished: no append or completion will wake a reader now; it must page through on its own.
    expect((await readSse(await follow(reqId))).map((e) => e.data)).toEqual(data);
    const rest = await readSse(await follow(reqId, { 'last-event-id': live[99]?.id ?? '' }));
    expect(rest.map((e) => e.data)).toEqual(data.slice(100));
    expectIncreasingIds([...live.slice(0, 100), ...rest]);
  });

  it('a malformed or impossible Last-Event-ID reads from the start', async () => {
    const reqId = crypto.randomUUID();
    await events().append(reqId, [{ data: 'a' }, { data: 'b' }, { data: 'c', last: true }]);
    const ids = (await events().read(reqId, '0')).map((e) => e.id);
    for (const bad of ['', 'abc', '12', '1-2-3', '-1-0', '1.5-0', '0-0', '99999999999999999999999-0', `${ids[0]}x`]) {
      const res = await follow(reqId, { 'last-event-id': bad });
      expect(res.status, bad).toBe(200);
      const got = await readSse(res);
      expect(
        got.map((e) => e.data),
        bad,
      ).toEqual(['a', 'b', 'c']);
      expect(got.map((e) => e.id)).toEqual(ids);
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
