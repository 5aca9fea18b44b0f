import { connect } from 'node:net';
import { writeGenerativeModel, writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({}, async (dir) => {
    await writeGenerativeModel(dir);
    await writeTritonExampleModels(dir);
  });
});
afterAll(async () => {
  await fx?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${fx.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The `data:` payloads of a server-sent event body, parsed. */
const eventsOf = (text: string) =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);

describe("Triton's generate extension", () => {
  it('generate_stream: one event per response of a decoupled model, as the model makes them', async () => {
    const res = await post('/v2/models/generative/generate_stream', { text_input: 'H', max_tokens: 4, id: 'g1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = eventsOf(await res.text());
    expect(events).toEqual(
      ['i', ',', 'N', 'V'].map((t) => ({ model_name: 'generative', model_version: '1', id: 'g1', text_output: t })),
    );
  });

  it('generate: the one response of a model, its outputs by name (a batching model gets a batch of one)', async () => {
    const a = Array.from({ length: 16 }, (_, i) => i);
    const res = await post('/v2/models/simple/generate', { INPUT0: a, INPUT1: a.map(() => 1) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { model_name: string; OUTPUT0: number[]; OUTPUT1: number[] };
    expect(body.model_name).toBe('simple');
    expect(body.OUTPUT0).toEqual(a.map((v) => v + 1));
    expect(body.OUTPUT1).toEqual(a.map((v) => v - 1));
    // A decoupled model making exactly one response is fine; more is Triton's error.
    const one = await post('/v2/models/generative/versions/1/generate', { text_input: 'H', max_tokens: 1 });
    expect(await one.json()).toEqual({ model_name: 'generative', model_version: '1', text_output: 'i' });
    const many = await post('/v2/models/generative/generate', { text_input: 'H', max_tokens: 3 });
    expect(many.status).toBe(400);
    expect(await many.json()).toEqual({
      error:
        'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
    });
  });

  it('a request refused before any response is an ordinary error answer, not a stream', async () => {
    const bad = await post('/v2/models/generative/generate_stream', { text_input: 'H', max_tokens: 0 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'max_tokens must be between 1 and 4096, got 0' });
    const missing = await post('/v2/models/generative/generate_stream', { max_tokens: 2 });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: string }).error).toMatch(/missing required input\(s\) \['text_input'\]/);
    const notJson = await fetch(`${fx.url}/v2/models/generative/generate`, { method: 'POST', body: '{"text_input"' });
    expect(notJson.status).toBe(400);
    const unknown = await post('/v2/models/nope/generate_stream', { text_input: 'H' });
    expect(unknown.status).toBe(400);
  });

  it('a client that closes the stream early stops the model, and the server serves on', async () => {
    // repeat_int32 waits DELAY ms before each response: the second one is a minute away, so only the client's
    // leaving can end this request within the test.
    const body = JSON.stringify({ IN: [7, 8], DELAY: [0, 60_000], WAIT: 0 });
    const socket = connect(fx.server.port, '127.0.0.1');
    socket.write(
      `POST /v2/models/repeat_int32/generate_stream HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    let received = '';
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        if (received.includes('"OUT":7')) resolve();
      });
    });
    socket.destroy();
    const failed = async () => fx.core.statistics('repeat_int32')[0]?.inference_stats.fail.count ?? 0;
    const deadline = Date.now() + 20_000;
    while ((await failed()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await failed()).toBe(1);
    expect(received).toContain('text/event-stream');
    const again = await post('/v2/models/generative/generate_stream', { text_input: 'H', max_tokens: 2 });
    expect(eventsOf(await again.text()).map((e) => e.text_output)).toEqual(['i', ',']);
  });
});
