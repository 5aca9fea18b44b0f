import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import { createLogger, startMetricsServer } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceCore } from '../core/core-types.ts';
import { startInferenceCore } from '../core/create-core.ts';
import { createTritonMetrics } from './triton-metrics.ts';

let dir: string;
let core: InferenceCore;
let server: { port: number; close(): Promise<void> };

const int32 = (name: string, rows: number): Tensor => ({
  name,
  datatype: 'INT32',
  shape: [rows, 16],
  data: new Int32Array(16 * rows).fill(2),
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-metrics-'));
  await generateExampleRepository(dir);
  core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    createLogger({ name: 'test', level: 'silent' }),
  );
  server = await startMetricsServer(createTritonMetrics(core), { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await server?.close();
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

const scrape = async () => {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
};
const value = (text: string, metric: string, labels: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
};

describe('Triton metrics on their own port', () => {
  it('counts what the core really did, with model and version labels', async () => {
    await core.infer({ modelName: 'simple', inputs: [int32('INPUT0', 3), int32('INPUT1', 3)] });
    await core.infer({ modelName: 'simple', inputs: [int32('INPUT0', 1), int32('INPUT1', 1)] });
    await core.infer({ modelName: 'simple', inputs: [int32('INPUT0', 1)] }).catch(() => undefined);
    const text = await scrape();
    const l = 'model="simple",version="1"';
    expect(value(text, 'nv_inference_request_success', l)).toBe(2);
    expect(value(text, 'nv_inference_count', l)).toBe(4);
    expect(value(text, 'nv_inference_exec_count', l)).toBe(2);
    expect(value(text, 'nv_inference_request_failure', `${l},reason="OTHER"`)).toBe(1);
    expect(value(text, 'nv_inference_pending_request_count', l)).toBe(0);
    expect(value(text, 'nv_inference_compute_infer_duration_us', l)).toBeGreaterThanOrEqual(0);
    expect(value(text, 'nv_inference_request_duration_us', l)).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nv_inference_request_success counter');
    expect(text).toContain('# TYPE nv_inference_queue_duration_us counter');
    expect(value(text, 'nv_inference_count', 'model="classifier",version="1"')).toBe(0);
    // A second scrape reports the same totals (values are set, not added up again).
    expect(value(await scrape(), 'nv_inference_count', l)).toBe(4);
  });

  it('answers 404 off /metrics', async () => {
    expect((await fetch(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
  });
});
