import { gzipSync } from 'node:zlib';
import { CLASSIFIER_LABELS } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, postInfer, startKserveFixture } from '../http/kserve-test-fixture.ts';
import { decodeV1 } from '../triton-v1/v1-codec.ts';
import type { InferResponseHeaderMsg, ServerStatusMsg } from '../triton-v1/v1-messages.ts';
import { float32sOf, int32sOf, nvStatus, postV1Infer, SIMPLE_HEADER, simpleBody } from './v1-test-helpers.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const sum = Array.from({ length: 16 }, (_, i) => i + 1);

/** BYTES elements with their 4-byte little-endian length prefixes. */
const stringTensor = (values: string[]) =>
  Buffer.concat(
    values.flatMap((v) => {
      const len = Buffer.alloc(4);
      len.writeUInt32LE(Buffer.byteLength(v));
      return [len, Buffer.from(v)];
    }),
  );

const classifierInput = (rows: number) =>
  new Uint8Array(Float32Array.from({ length: 784 * rows }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5).buffer);

describe('raw and classification outputs', () => {
  it('serves simple at an explicit version and at -1 (latest), echoing the request id', async () => {
    for (const path of ['simple/1', 'simple/-1']) {
      const answer = await postV1Infer(fx.url, path, `id: 77 ${SIMPLE_HEADER}`, simpleBody());
      expect(answer.header).toMatchObject({ model_name: 'simple', model_version: 1, id: 77 });
      expect(int32sOf(answer.raw[0]!)).toEqual(sum);
    }
  });

  it('returns only the requested outputs, in the requested order', async () => {
    const header = 'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT1" }';
    const answer = await postV1Infer(fx.url, 'simple', header, simpleBody());
    expect(answer.header.output.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(answer.raw).toHaveLength(1);
    const none = await postV1Infer(
      fx.url,
      'simple',
      'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" }',
      simpleBody(),
    );
    expect(none.header.output ?? []).toEqual([]);
    expect(none.raw).toEqual([]);
  });

  it('classifies with the model labels, per batch item, with the same values the raw output holds', async () => {
    const header = (cls: string) => `batch_size: 2 input { name: "INPUT" } output { name: "PROBABILITIES"${cls} }`;
    const raw = await postV1Infer(fx.url, 'classifier', header(''), classifierInput(2));
    const probabilities = float32sOf(raw.raw[0]!);
    const top = await postV1Infer(
      fx.url,
      'classifier',
      header(' cls { count: 3 }'),
      classifierInput(2),
      '?format=binary',
    );
    const classes = top.header.output[0]!.batch_classes!;
    expect(classes).toHaveLength(2);
    classes.forEach((item, row) => {
      const scores = probabilities.slice(row * 10, row * 10 + 10);
      const expected = [...scores.keys()].sort((a, b) => scores[b]! - scores[a]!).slice(0, 3);
      expect(item.cls!.map((c) => c.idx ?? 0)).toEqual(expected);
      for (const c of item.cls!) {
        expect(c.label).toBe(CLASSIFIER_LABELS[c.idx ?? 0]);
        expect(c.value).toBeCloseTo(scores[c.idx ?? 0]!, 6);
      }
    });
    // The trailing binary header says the same (its float32 values read back widened to float64).
    const trailer = decodeV1('InferResponseHeader', top.trailer) as unknown as InferResponseHeaderMsg;
    const flat = (h: InferResponseHeaderMsg) => h.output[0]!.batch_classes!.flatMap((c) => c.cls!);
    expect(flat(trailer).map((c) => [c.idx, c.label])).toEqual(flat(top.header).map((c) => [c.idx, c.label]));
    expect(flat(trailer).map((c) => Math.fround(c.value!))).toEqual(flat(top.header).map((c) => Math.fround(c.value!)));
    expect(top.raw).toEqual([]);
  });

  it('classifies without labels when the model has no label file', async () => {
    const answer = await postV1Infer(
      fx.url,
      'classifier_unlabeled',
      'batch_size: 1 input { name: "INPUT" } output { name: "PROBABILITIES" cls { count: 2 } }',
      classifierInput(1),
    );
    const cls = answer.header.output[0]!.batch_classes![0]!.cls!;
    expect(cls).toHaveLength(2);
    expect(cls.every((c) => c.label === undefined)).toBe(true);
  });
});

describe('variable dimensions and STRING tensors', () => {
  it('takes dims for a -1 dimension and reports the output dims it produced', async () => {
    const values = Float32Array.from({ length: 2 * 5 }, (_, i) => i / 4);
    const answer = await postV1Infer(
      fx.url,
      'identity_fp32',
      'batch_size: 2 input { name: "INPUT0" dims: 5 } output { name: "OUTPUT0" }',
      new Uint8Array(values.buffer),
    );
    expect(answer.header.output[0]!.raw).toEqual({ dims: [5], batch_byte_size: 40 });
    expect(float32sOf(answer.raw[0]!)).toEqual([...values]);
  });

  it('round-trips STRING elements with 4-byte length prefixes, batch_byte_size given', async () => {
    const values = ['hello', '', 'wörld', 'a:b', 'x'.repeat(300), 'end'];
    const body = stringTensor(values);
    const answer = await postV1Infer(
      fx.url,
      'identity_bytes',
      `batch_size: 2 input { name: "INPUT0" dims: 3 batch_byte_size: ${body.length} } output { name: "OUTPUT0" }`,
      body,
      '?format=binary',
    );
    expect(answer.header.output[0]!.raw).toEqual({ dims: [3], batch_byte_size: body.length });
    expect(Buffer.from(answer.raw[0]!)).toEqual(body);
    expect(decodeV1('InferResponseHeader', answer.trailer)).toMatchObject({
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_STRING' }],
    });
  });
});

describe('one core behind V2 and v1', () => {
  it('counts v1 and V2 requests in the same statistics, per batch size in ServerStatus', async () => {
    const before = (await (await fetch(`${fx.url}/v2/models/simple/stats`)).json()) as {
      model_stats: { inference_count: number; execution_count: number }[];
    };
    await postV1Infer(fx.url, 'simple', SIMPLE_HEADER.replace('batch_size: 1', 'batch_size: 3'), simpleBody(3));
    await postInfer(
      fx.url,
      'simple',
      JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(0) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(0) },
        ],
      }),
    );
    const res = await fetch(`${fx.url}/api/status/simple?format=binary`);
    const status = decodeV1('ServerStatus', new Uint8Array(await res.arrayBuffer())) as unknown as ServerStatusMsg;
    const version = status.model_status.simple!.version_status!['1']!;
    const stats0 = before.model_stats[0]!;
    expect(version.model_inference_count).toBe(stats0.inference_count + 4);
    expect(version.model_execution_count).toBe(stats0.execution_count + 2);
    expect(version.last_inference_timestamp_milliseconds).toBeGreaterThan(Date.now() - 60_000);
    const three = version.infer_stats!['3']!;
    expect(three.success.count).toBeGreaterThanOrEqual(1);
    expect(three.compute.count).toBe(three.success.count);
    expect(three.compute.total_time_ns).toBeGreaterThan(0);
    expect(version.infer_stats!['1']!.success.count).toBeGreaterThanOrEqual(1);
  });

  it('accepts a gzip-encoded body like the V2 routes', async () => {
    const res = await fetch(`${fx.url}/api/infer/simple`, {
      method: 'POST',
      body: gzipSync(simpleBody()),
      headers: { 'content-encoding': 'gzip', 'NV-InferRequest': SIMPLE_HEADER },
    });
    expect(res.status).toBe(200);
    expect(nvStatus(res).code).toBe('SUCCESS');
    expect(int32sOf(new Uint8Array(await res.arrayBuffer()).subarray(0, 64))).toEqual(sum);
  });

  it('lists the repository (v1.15 /api/repository/index) and leaves the V2 routes as they were', async () => {
    const res = await fetch(`${fx.url}/api/repository/index?format=json`, { method: 'POST' });
    expect(nvStatus(res).code).toBe('SUCCESS');
    const index = (await res.json()) as { models: { name: string }[] };
    expect(index.models.map((m) => m.name)).toEqual(expect.arrayContaining(['simple', 'classifier', 'identity_bytes']));
    const v2 = await fetch(`${fx.url}/v2/health/ready`);
    expect(v2.status).toBe(200);
    expect(v2.headers.get('nv-status')).toBeNull();
    expect((await fetch(`${fx.url}/v2/nothing`)).status).toBe(404);
  });
});
