import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, simpleJsonBody, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const get = (path: string, init: RequestInit = {}) => fetch(`${fx.url}${path}`, init);
const post = (path: string, body?: string, init: RequestInit = {}) =>
  fetch(`${fx.url}${path}`, { method: 'POST', ...(body !== undefined ? { body } : {}), ...init });

interface ModelStats {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: Record<string, { count: number; ns: number }>;
  batch_stats: { batch_size: number; compute_infer: { count: number; ns: number } }[];
}

describe('server endpoints', () => {
  it('GET /v2 answers server metadata named triton', async () => {
    const res = await get('/v2');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { name: string; version: string; extensions: string[] };
    expect(body.name).toBe('triton');
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(body.extensions).toEqual(expect.arrayContaining(['binary_tensor_data', 'classification', 'statistics']));
  });

  it('health live and ready are 200 with an empty body, query parameters ignored', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready', '/v2/health/ready?test_1=1&test_2=2']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toBe('');
    }
  });

  it('unknown routes and wrong methods are 404 {"error":"Not Found"}', async () => {
    for (const res of [
      await get('/v2/nothing'),
      await get('/'),
      await get('/v2/models/simple/infer'),
      await post('/v2/health/live'),
      await get('/v2/models/simple/versions/1/unknown'),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Not Found' });
    }
  });
});

describe('model metadata and readiness', () => {
  const simpleMetadata = {
    name: 'simple',
    versions: ['1'],
    platform: 'onnxruntime_onnx',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
    ],
    outputs: [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
    ],
  };

  it('answers metadata with the -1 batch dimension, with and without a version', async () => {
    for (const path of ['/v2/models/simple', '/v2/models/simple/versions/1', '/v2/models/simple?test_1=1']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual(simpleMetadata);
    }
    const classifier = (await (await get('/v2/models/classifier')).json()) as typeof simpleMetadata;
    expect(classifier.inputs).toEqual([{ name: 'INPUT', datatype: 'FP32', shape: [-1, 784] }]);
    expect(classifier.outputs).toEqual([{ name: 'PROBABILITIES', datatype: 'FP32', shape: [-1, 10] }]);
  });

  it('refuses an unknown model with 400 and the text clients match', async () => {
    for (const path of [
      '/v2/models/nope',
      '/v2/models/nope/versions/1',
      '/v2/models/nope/config',
      '/v2/models/nope/stats',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(await res.json()).toEqual({ error: "Request for unknown model: 'nope' is not found" });
    }
    const infer = await post('/v2/models/nope/infer', simpleJsonBody());
    expect(infer.status).toBe(400);
    expect(await infer.json()).toEqual({ error: "Request for unknown model: 'nope' is not found" });
  });

  it('answers 503 for a version that is not ready and 400 for a version that is not a number', async () => {
    const missing = await get('/v2/models/simple/versions/7');
    expect(missing.status).toBe(503);
    expect(await missing.json()).toEqual({
      error: "Request for unknown model: 'simple' version 7 is not at ready state",
    });
    for (const path of ['/v2/models/simple/versions/latest', '/v2/models/simple/versions/-1/ready']) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect((await res.json()) as { error: string }).toEqual({ error: expect.stringContaining('version') });
    }
    const infer = await post('/v2/models/simple/versions/x1/infer', simpleJsonBody());
    expect(infer.status).toBe(400);
  });

  it('model ready is 200 empty for a ready version, 400 empty otherwise', async () => {
    for (const [path, status] of [
      ['/v2/models/simple/ready', 200],
      ['/v2/models/simple/versions/1/ready', 200],
      ['/v2/models/identity_fp32/ready', 200],
      ['/v2/models/simple/versions/2/ready', 400],
      ['/v2/models/nope/ready', 400],
    ] as const) {
      const res = await get(path);
      expect(res.status, path).toBe(status);
      expect(await res.text()).toBe('');
    }
  });
});

describe('model config', () => {
  it('answers the config as JSON with int64 fields as numbers', async () => {
    for (const path of ['/v2/models/simple/config', '/v2/models/simple/versions/1/config']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      const config = (await res.json()) as {
        name: string;
        platform: string;
        max_batch_size: number;
        input: { name: string; data_type: string; dims: number[] }[];
        output: { name: string; data_type: string; dims: number[] }[];
      };
      expect(config.name).toBe('simple');
      expect(config.platform).toBe('onnxruntime_onnx');
      expect(config.max_batch_size).toBe(8);
      expect(config.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
        ['INPUT0', 'TYPE_INT32', [16]],
        ['INPUT1', 'TYPE_INT32', [16]],
      ]);
      expect(config.output.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    }
  });

  it('shows what auto-complete filled in for a model without config.pbtxt', async () => {
    const config = (await (await get('/v2/models/classifier_unlabeled/config')).json()) as {
      max_batch_size: number;
      input: { name: string; dims: number[] }[];
      output: { name: string; dims: number[] }[];
    };
    expect(config.max_batch_size).toBeGreaterThan(0);
    expect(config.input).toEqual([expect.objectContaining({ name: 'INPUT', dims: [784] })]);
    expect(config.output).toEqual([expect.objectContaining({ name: 'PROBABILITIES', dims: [10] })]);
  });

  it('shows the label file of an output that has one', async () => {
    const config = (await (await get('/v2/models/classifier/config')).json()) as {
      output: { name: string; label_filename: string }[];
    };
    expect(config.output[0]?.label_filename).toBe('labels.txt');
  });
});

describe('statistics', () => {
  const simpleStats = async (path = '/v2/models/simple/stats'): Promise<ModelStats> => {
    const res = await get(path);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { model_stats: ModelStats[] };
    expect(body.model_stats).toHaveLength(1);
    return body.model_stats[0] as ModelStats;
  };

  it('lists every loaded model version under /v2/models/stats', async () => {
    const res = await get('/v2/models/stats');
    expect(res.status).toBe(200);
    const { model_stats } = (await res.json()) as { model_stats: ModelStats[] };
    const names = model_stats.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['simple', 'classifier', 'classifier_unlabeled', 'identity_fp32']));
    expect(model_stats.every((s) => s.version === '1')).toBe(true);
  });

  it('counts inferences: success, inference_count, execution_count and compute time grow', async () => {
    const before = await simpleStats();
    for (let i = 0; i < 3; i++) {
      const res = await post('/v2/models/simple/infer', simpleJsonBody());
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const after = await simpleStats('/v2/models/simple/versions/1/stats');
    expect(after.name).toBe('simple');
    expect(after.version).toBe('1');
    expect(after.inference_stats.success?.count).toBe((before.inference_stats.success?.count ?? 0) + 3);
    expect(after.inference_count).toBe(before.inference_count + 3);
    expect(after.execution_count).toBe(before.execution_count + 3);
    expect(after.inference_stats.compute_infer?.count).toBe((before.inference_stats.compute_infer?.count ?? 0) + 3);
    expect(after.inference_stats.compute_infer?.ns).toBeGreaterThan(before.inference_stats.compute_infer?.ns ?? 0);
    expect(after.last_inference).toBeGreaterThan(0);
    expect(after.batch_stats.find((b) => b.batch_size === 1)?.compute_infer.count).toBeGreaterThanOrEqual(3);
  });

  it('counts a failed inference as a failure', async () => {
    const before = await simpleStats();
    const bad = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(0) }],
    });
    const res = await post('/v2/models/simple/infer', bad);
    expect(res.status).toBe(400);
    const after = await simpleStats();
    expect(after.inference_stats.fail?.count).toBe((before.inference_stats.fail?.count ?? 0) + 1);
    expect(after.inference_stats.success?.count).toBe(before.inference_stats.success?.count);
  });

  it('answers 503 for stats of a version that is not loaded', async () => {
    const res = await get('/v2/models/simple/versions/3/stats');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: expect.stringContaining("'simple' version 3") });
  });
});
