import { status } from '@grpc/grpc-js';
import { createFunctionRegistry } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createEventStream, createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient } from './grpc-test-fixture.ts';
import { ADMIN_KEY, adminAuth, createHarness, fnId, type Harness, verId } from './harness.ts';

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness({ tritonExamples: true });
  await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const pexec = (model: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId(model)}`, {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/json', 'nvcf-poll-seconds': '30', ...headers },
    body: JSON.stringify(body),
  });

const repeat = (values: number[]) => ({
  id: 'rep',
  inputs: [
    { name: 'IN', datatype: 'INT32', shape: [values.length], data: values },
    { name: 'DELAY', datatype: 'UINT32', shape: [values.length], data: values.map(() => 0) },
    { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [0] },
  ],
});

interface KserveJson {
  id?: string;
  parameters?: { triton_final_response?: boolean };
  outputs: { name: string; data: number[] }[];
}
const outOf = (r: KserveJson) => r.outputs.find((o) => o.name === 'OUT')?.data[0];

describe("Triton's example models through pexec", () => {
  it('a decoupled model (repeat_int32) answers a plain pexec with every response in one document', async () => {
    const res = await pexec('repeat_int32', repeat([5, 6, 7]));
    expect(res.status).toBe(200);
    const { responses } = (await res.json()) as { responses: KserveJson[] };
    expect(responses.map(outOf)).toEqual([5, 6, 7]);
    expect(responses.map((r) => r.parameters?.triton_final_response)).toEqual([false, false, false]);
    expect(responses.map((r) => r.id)).toEqual(['rep', 'rep', 'rep']);
  });

  it('and a streaming pexec with one event per response, closed by an empty final response', async () => {
    const res = await pexec('repeat_int32', repeat([1, 2]), { accept: 'text/event-stream' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text())
      .split('\n\n')
      .map((e) =>
        e
          .split('\n')
          .find((l) => l.startsWith('data:'))
          ?.slice(5)
          .trim(),
      )
      .filter((d): d is string => d !== undefined)
      .map((d) => JSON.parse(d) as KserveJson);
    expect(events.map(outOf)).toEqual([1, 2, undefined]);
    expect(events.map((e) => e.parameters?.triton_final_response)).toEqual([false, false, true]);
  });

  it('a streaming client that leaves has the grace to resume (it takes over); one that does not is stopped', async () => {
    const graceful = await h.gateway({ STREAM_RESUME_GRACE_MS: '30000' });
    const brief = await h.gateway({ STREAM_RESUME_GRACE_MS: '200' });
    const events = createEventStream(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 60 });
    // The second response is a minute away: only a cancel can end these requests within the test.
    const slow = { inputs: repeat([7, 8]).inputs.map((t) => (t.name === 'DELAY' ? { ...t, data: [0, 60_000] } : t)) };
    const start = async (url: string) => {
      const ac = new AbortController();
      const res = await fetch(`${url}/v2/nvcf/pexec/functions/${fnId('repeat_int32')}`, {
        method: 'POST',
        headers: { ...adminAuth, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(slow),
        signal: ac.signal,
      });
      const reqId = res.headers.get('nvcf-reqid') ?? '';
      const reader = res.body?.getReader();
      let text = '';
      while (!text.includes('"OUT"')) text += new TextDecoder().decode((await reader?.read())?.value);
      ac.abort();
      return reqId;
    };
    const ended = async (reqId: string) => (await events.read(reqId, '0')).some((e) => e.last);

    // No resume: once the 200 ms grace is over the model is stopped and the stream closed.
    const dropped = await start(brief.url);
    const deadline = Date.now() + 20_000;
    while (!(await ended(dropped)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await ended(dropped)).toBe(true);

    // A resume within the grace takes the request over: nothing is cancelled, and its own leaving now stops it.
    const resumed = await start(graceful.url);
    const ac = new AbortController();
    // Held open until the model's next response (a minute away): the takeover shows in Redis meanwhile.
    // Resumed through the other gateway (any serves a stream): its 200 ms grace ends the test soon after it leaves.
    const follow = fetch(`${brief.url}/v2/nvcf/pexec/status/${resumed}`, {
      headers: {
        ...adminAuth,
        accept: 'text/event-stream',
        'last-event-id': (await events.read(resumed, '0'))[0]?.id ?? '',
      },
      signal: ac.signal,
    }).catch(() => undefined);
    const attachKey = createKeys(h.keyPrefix).streamAttach(resumed);
    while ((await h.redis.get(attachKey)) !== '2') await new Promise((r) => setTimeout(r, 20));
    // What the dropped stream's grace timer does once it fires: nothing, since a resume attached after it.
    expect(await events.cancelUnlessResumed(resumed, 1)).toBe(false);
    expect(await events.isCancelled(resumed)).toBe(false);
    ac.abort();
    await follow;
    const until = Date.now() + 20_000;
    while (!(await ended(resumed)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await ended(resumed)).toBe(true);
  });

  it('the generative function is a decoupled model too: a KServe V2 body gets its tokens as responses', async () => {
    const res = await pexec('generative', {
      inputs: [
        { name: 'text_input', datatype: 'BYTES', shape: [1], data: ['H'] },
        { name: 'max_tokens', datatype: 'INT32', shape: [1], data: [4] },
      ],
    });
    expect(res.status).toBe(200);
    const { responses } = (await res.json()) as { responses: { outputs: { name: string; data: string[] }[] }[] };
    expect(responses.map((r) => r.outputs[0]?.name)).toEqual(Array(4).fill('text_output'));
    expect(responses.map((r) => r.outputs[0]?.data[0]).join('')).toBe('i,NV');
    // The same function answers an OpenAI request in OpenAI's shape (sse.int.test.ts streams it).
    const chat = await pexec('generative', { messages: [{ role: 'user', content: 'H' }], max_tokens: 4 });
    expect(await chat.json()).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'i,NV' } }] });
  });

  it("a decoupled model through the gateway's gRPC ModelInfer is refused with Triton's words and code", async () => {
    const client = grpcClient(`127.0.0.1:${gw.grpcPort}`);
    try {
      const { error } = await client.fail(
        'ModelInfer',
        {
          model_name: 'repeat_int32',
          inputs: [
            { name: 'IN', datatype: 'INT32', shape: [1] },
            { name: 'DELAY', datatype: 'UINT32', shape: [1] },
            { name: 'WAIT', datatype: 'UINT32', shape: [1] },
          ],
          raw_input_contents: [Buffer.alloc(4), Buffer.alloc(4), Buffer.alloc(4)],
        },
        { metadata: { 'function-id': fnId('repeat_int32'), authorization: `Bearer ${ADMIN_KEY}` } },
      );
      expect(error.code).toBe(status.UNIMPLEMENTED);
      expect(error.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
    } finally {
      client.close();
    }
  });

  it('a sequence (simple_dyna_sequence) through pexec with one worker: START, the middle, END with the id', async () => {
    const step = async (value: number, flags: Record<string, boolean>) => {
      const res = await pexec('simple_dyna_sequence', {
        parameters: { sequence_id: 4711, ...flags },
        inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as KserveJson).outputs[0]?.data[0];
    };
    expect(await step(0, { sequence_start: true })).toBe(1);
    expect(await step(11, {})).toBe(11);
    expect(await step(1, { sequence_end: true })).toBe(4712);
    const late = await pexec('simple_dyna_sequence', {
      parameters: { sequence_id: 4711 },
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [1] }],
    });
    expect(late.status).toBe(400);
    expect(((await late.json()) as { detail: string }).detail).toContain('must specify the START flag');
  });

  it('simple_identity echoes BYTES through pexec', async () => {
    const res = await pexec('simple_identity', {
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['he\u0000llo', 'wörld'] }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { outputs: { data: string[] }[] }).outputs[0]?.data).toEqual([
      'he\u0000llo',
      'wörld',
    ]);
  });
});

describe('sequences through pexec with two workers (sequence routing)', () => {
  it('every request of a sequence reaches the worker that holds its running sum (simple_string_dyna_sequence)', async () => {
    await h.worker();
    const registry = createFunctionRegistry(h.redis, createKeys(h.keyPrefix));
    const versionId = verId('simple_string_dyna_sequence');
    for (let i = 0; (await registry.liveWorkers([versionId]))[0]?.length !== 2; i++) {
      if (i > 100) throw new Error('the second worker never became live');
      await new Promise((r) => setTimeout(r, 100));
    }
    const values = [11, 7, 5, 3, 2, 0, 1];
    const run = async (id: string) => {
      const inputs = [20, ...values.map((v) => -v)];
      const outputs: number[] = [];
      for (const [i, value] of inputs.entries()) {
        const res = await pexec('simple_string_dyna_sequence', {
          parameters: {
            sequence_id: id,
            ...(i === 0 ? { sequence_start: true } : {}),
            ...(i === inputs.length - 1 ? { sequence_end: true } : {}),
          },
          inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
        });
        expect(res.status, await res.clone().text()).toBe(200);
        outputs.push(((await res.json()) as KserveJson).outputs[0]?.data[0] ?? Number.NaN);
      }
      return outputs;
    };
    // Several sequences side by side: their owners are picked among both workers.
    const answers = await Promise.all(['1002', '2002', '3002', '4002'].map(run));
    const expected = (id: number) => [20, 9, 2, -3, -6, -8, -8, -9 + id];
    expect(answers).toEqual([expected(1002), expected(2002), expected(3002), expected(4002)]);
  });

  it("and so does one sent with the binary tensor extension, tritonclient's default", async () => {
    const run = async (id: number) => {
      const inputs = [20, -11, -7, -5];
      const outputs: number[] = [];
      for (const [i, value] of inputs.entries()) {
        const header = Buffer.from(
          JSON.stringify({
            parameters: {
              sequence_id: id,
              ...(i === 0 ? { sequence_start: true } : {}),
              ...(i === inputs.length - 1 ? { sequence_end: true } : {}),
            },
            inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], parameters: { binary_data_size: 4 } }],
            outputs: [{ name: 'OUTPUT', parameters: { binary_data: false } }],
          }),
        );
        const tensor = Buffer.alloc(4);
        tensor.writeInt32LE(value);
        const res = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple_string_dyna_sequence')}`, {
          method: 'POST',
          headers: {
            ...adminAuth,
            'content-type': 'application/octet-stream',
            'inference-header-content-length': String(header.length),
            'nvcf-poll-seconds': '30',
          },
          body: Buffer.concat([header, tensor]),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        outputs.push(((await res.json()) as KserveJson).outputs[0]?.data[0] ?? Number.NaN);
      }
      return outputs;
    };
    const answers = await Promise.all([5002, 6002, 7002, 8002].map(run));
    const expected = (id: number) => [20, 9, 2, -3 + id];
    expect(answers).toEqual([expected(5002), expected(6002), expected(7002), expected(8002)]);
  });
});
