import { gzipSync } from 'node:zlib';
import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest, verId } from './harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

const expectProblem = async (res: Response, status: number, detail?: RegExp) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
  if (detail) expect(body.detail).toMatch(detail);
  return body;
};

describe('pexec through Redis and an ONNX worker', () => {
  it('answers 200 with the sums and differences of simple, and the NVCF headers', async () => {
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest({ id: 'req-7' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('nvcf-reqid')).toMatch(UUID);
    expect(res.headers.get('nvcf-status')).toBe('fulfilled');
    expect(res.headers.get('nvcf-percent-complete')).toBe('100');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/nvcf-reqid/i);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as {
      model_name: string;
      model_version: string;
      id: string;
      outputs: { name: string; datatype: string; shape: number[]; data: number[] }[];
    };
    expect(body.model_name).toBe('simple');
    expect(body.model_version).toBe('1');
    expect(body.id).toBe('req-7');
    const out = Object.fromEntries(body.outputs.map((o) => [o.name, o]));
    expect(out.OUTPUT0).toMatchObject({ datatype: 'INT32', shape: [1, 16] });
    expect(out.OUTPUT0?.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(out.OUTPUT1?.data).toEqual(Array.from({ length: 16 }, (_, i) => i - 1));
  });

  it('serves a pinned version, nested data, and only the requested outputs', async () => {
    const nested = {
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [2, 16], data: [Array(16).fill(5), Array(16).fill(9)] },
        { name: 'INPUT1', datatype: 'INT32', shape: [2, 16], data: [Array(16).fill(2), Array(16).fill(4)] },
      ],
      outputs: [{ name: 'OUTPUT1' }],
    };
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}/versions/${verId('simple')}`, nested);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    expect(body.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(body.outputs[0]?.shape).toEqual([2, 16]);
    expect(body.outputs[0]?.data).toEqual([...Array(16).fill(3), ...Array(16).fill(5)]);
  });

  it('accepts a gzip-compressed body', async () => {
    const res = await gfetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(simpleRequest())),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outputs: { data: number[] }[] };
    expect(body.outputs[0]?.data[15]).toBe(16);
  });

  it('runs the classifier: ten probabilities per row that sum to one', async () => {
    const rows = 3;
    const req = {
      inputs: [
        {
          name: 'INPUT',
          datatype: 'FP32',
          shape: [rows, 784],
          data: Array.from({ length: rows * 784 }, (_, i) => (i % 13) / 13),
        },
      ],
    };
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, req);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    const probs = body.outputs[0];
    expect(probs?.name).toBe('PROBABILITIES');
    expect(probs?.shape).toEqual([rows, 10]);
    for (let r = 0; r < rows; r++) {
      const row = probs?.data.slice(r * 10, r * 10 + 10) ?? [];
      expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    }
  });

  it('lists the repository models as ACTIVE functions with stable ids and model metadata', async () => {
    const res = await gfetch(`${gw.url}/v2/nvcf/functions`);
    expect(res.status).toBe(200);
    const { functions } = (await res.json()) as { functions: Record<string, unknown>[] };
    const simple = functions.find((f) => f.name === 'simple');
    expect(simple).toMatchObject({
      id: fnId('simple'),
      versionId: verId('simple'),
      status: 'ACTIVE',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      model: {
        name: 'simple',
        version: '1',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
          { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
        ],
      },
    });
    expect(simple?.activeInstances).toHaveLength(1);
    // The live worker as NVCF's InstanceDto: its pool as `backend`, its start and latest heartbeat.
    const [instance] = (simple?.activeInstances ?? []) as Record<string, unknown>[];
    expect(instance).toMatchObject({ instanceStatus: 'ACTIVE', gpu: 'CPU', backend: expect.any(String) });
    const created = Date.parse(String(instance?.instanceCreatedAt));
    expect(created).toBeLessThanOrEqual(Date.parse(String(instance?.instanceUpdatedAt)));
    expect(functions.map((f) => f.name)).toContain('classifier');
  });

  it('answers /health without credentials', async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
  });
});

describe('bad input gets a 4xx problem+json and the gateway keeps serving', () => {
  const simplePath = () => `/v2/nvcf/pexec/functions/${fnId('simple')}`;

  it('unknown function and unknown version → 404', async () => {
    await expectProblem(
      await pexec(gw.url, '/v2/nvcf/pexec/functions/00000000-0000-4000-8000-000000000000', simpleRequest()),
      404,
      /not found/,
    );
    await expectProblem(
      await pexec(gw.url, `${simplePath()}/versions/00000000-0000-4000-8000-000000000000`, simpleRequest()),
      404,
      /version .* not found/,
    );
  });

  it('ids that are not UUIDs → 400', async () => {
    await expectProblem(
      await pexec(gw.url, '/v2/nvcf/pexec/functions/..%2F..%2Fetc', simpleRequest()),
      400,
      /not a UUID/,
    );
    await expectProblem(await gfetch(`${gw.url}/v2/nvcf/pexec/status/not-a-uuid`), 400, /not a UUID/);
  });

  it('invalid JSON and an empty body → 400', async () => {
    await expectProblem(await pexec(gw.url, simplePath(), '{"inputs": ['), 400, /not valid JSON/);
    await expectProblem(await pexec(gw.url, simplePath(), ''), 400, /empty/);
  });

  it('a body over the limit → 413', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(5 * 1024 * 1024) });
    await expectProblem(await pexec(gw.url, simplePath(), big), 413, /exceeds/);
    // Chunked, with no Content-Length: refused while it streams in.
    const chunk = new Uint8Array(1024 * 1024).fill(32);
    const chunked = await gfetch(`${gw.url}${simplePath()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 6; i++) c.enqueue(chunk);
          c.close();
        },
      }),
    } as RequestInit);
    await expectProblem(chunked, 413, /exceeds/);
    expect((await pexec(gw.url, simplePath(), simpleRequest())).status).toBe(200);
  });

  it("the model's own validation errors → 400 from the worker, with NVCF-STATUS errored", async () => {
    const cases: [object, RegExp][] = [
      [
        {
          inputs: [
            { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array(16).fill(1) },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
          ],
        },
        /data-type/,
      ],
      [
        {
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 15], data: Array(15).fill(1) },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 15], data: Array(15).fill(1) },
          ],
        },
        /shape/,
      ],
      [{ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) }] }, /INPUT1/],
      [
        {
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(15).fill(1) },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
          ],
        },
        /expected 16 elements/,
      ],
      [{ inputs: [{ name: 'INPUT0', datatype: 'FLOAT', shape: [1, 16], data: Array(16).fill(1) }] }, /datatype/i],
      [{ nothing: true }, /inputs/],
    ];
    for (const [body, detail] of cases) {
      const res = await pexec(gw.url, simplePath(), body);
      expect(res.headers.get('nvcf-status')).toBe('errored');
      expect(res.headers.get('nvcf-reqid')).toMatch(UUID);
      const problem = await expectProblem(res, 400, detail);
      expect(problem.type).toBe('urn:inference-service:problem-details:bad-request');
    }
    const ok = await pexec(gw.url, simplePath(), simpleRequest());
    expect(ok.status).toBe(200);
  });

  it('unknown routes → 404 problem+json', async () => {
    await expectProblem(await gfetch(`${gw.url}/v2/nvcf/nope`), 404);
  });
});
