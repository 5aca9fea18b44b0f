import { credentials, status } from '@grpc/grpc-js';
import { invokeUnary, loadKserveClients } from '@nvcf/kserve-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_OPTIONS, type GrpcFixture, int32Bytes, int32sOf, startGrpcFixture } from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  fx = await startGrpcFixture('server');
});
afterAll(async () => {
  await fx?.close();
});

const simpleRequest = () => ({
  model_name: 'simple',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
  ],
  raw_input_contents: [int32Bytes(Array.from({ length: 16 }, (_, i) => i)), int32Bytes(Array(16).fill(1))],
});

describe('server and model metadata RPCs', () => {
  it('ServerLive and ServerReady are true once the repository is loaded', async () => {
    expect(await fx.call('ServerLive')).toEqual({ live: true });
    expect(await fx.call('ServerReady')).toEqual({ ready: true });
  });

  it('ServerMetadata names the server "triton" and lists the implemented extensions', async () => {
    const res = await fx.call<{ name: string; version: string; extensions: string[] }>(
      'ServerMetadata',
      {},
      {
        metadata: { test: '1' },
      },
    );
    expect(res.name).toBe('triton');
    expect(res.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(res.extensions).toEqual(expect.arrayContaining(['classification', 'model_repository', 'statistics']));
  });

  it('ModelReady: true for a loaded model and version, false otherwise', async () => {
    expect(await fx.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
    expect(await fx.call('ModelReady', { name: 'simple', version: '1' })).toEqual({ ready: true });
    expect(await fx.call('ModelReady', { name: 'simple', version: '2' })).toEqual({ ready: false });
    expect(await fx.call('ModelReady', { name: 'nope' })).toEqual({ ready: false });
  });

  it('ModelMetadata carries the -1 batch dimension', async () => {
    const res = await fx.call('ModelMetadata', { name: 'simple' });
    expect(res).toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: ['-1', '16'] },
        { name: 'INPUT1', datatype: 'INT32', shape: ['-1', '16'] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: ['-1', '16'] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: ['-1', '16'] },
      ],
      properties: {},
    });
  });

  it('ModelMetadata of an unknown model → INVALID_ARGUMENT; unknown version → UNAVAILABLE', async () => {
    const unknown = await fx.fail('ModelMetadata', { name: 'nope' });
    expect(unknown.code).toBe(status.INVALID_ARGUMENT);
    expect(unknown.details).toBe("Request for unknown model: 'nope' is not found");
    const version = await fx.fail('ModelMetadata', { name: 'simple', version: '3' });
    expect(version.code).toBe(status.UNAVAILABLE);
  });

  it('ModelConfig returns the config (simple_grpc_health_metadata.py reads config.name)', async () => {
    const res = await fx.call<{ config: Record<string, unknown> & { input: Record<string, unknown>[] } }>(
      'ModelConfig',
      { name: 'simple' },
    );
    expect(res.config).toMatchObject({ name: 'simple', platform: 'onnxruntime_onnx', max_batch_size: 8 });
    expect(res.config.input[0]).toMatchObject({ name: 'INPUT0', data_type: 'TYPE_INT32', dims: ['16'] });
    const unknown = await fx.fail('ModelConfig', { name: 'nope' });
    expect(unknown.code).toBe(status.INVALID_ARGUMENT);
  });

  it('ModelConfig of an auto-completed model (no config.pbtxt) carries its inputs and outputs', async () => {
    const res = await fx.call<{ config: { name: string; input: { name: string }[]; output: { name: string }[] } }>(
      'ModelConfig',
      { name: 'identity_fp32' },
    );
    expect(res.config.name).toBe('identity_fp32');
    expect(res.config.input.map((i) => i.name)).toEqual(['INPUT0']);
    expect(res.config.output.map((o) => o.name)).toEqual(['OUTPUT0']);
  });
});

describe('ModelStatistics', () => {
  type Stats = {
    model_stats: {
      name: string;
      version: string;
      inference_count: string;
      execution_count: string;
      last_inference: string;
      inference_stats: { success: { count: string; ns: string } };
    }[];
  };

  it('counts inferences as they happen', async () => {
    const before = await fx.call<Stats>('ModelStatistics', { name: 'simple', version: '1' });
    expect(before.model_stats).toHaveLength(1);
    await fx.call('ModelInfer', simpleRequest());
    await fx.call('ModelInfer', simpleRequest());
    const after = await fx.call<Stats>('ModelStatistics', { name: 'simple' });
    const [b, a] = [before.model_stats[0]!, after.model_stats[0]!];
    expect(a).toMatchObject({ name: 'simple', version: '1' });
    expect(Number(a.inference_count) - Number(b.inference_count)).toBe(2);
    expect(Number(a.execution_count) - Number(b.execution_count)).toBe(2);
    expect(Number(a.inference_stats.success.count) - Number(b.inference_stats.success.count)).toBe(2);
    expect(Number(a.inference_stats.success.ns)).toBeGreaterThan(0);
    expect(Number(a.last_inference)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('an empty name returns every loaded model; an unknown one is INVALID_ARGUMENT', async () => {
    const all = await fx.call<Stats>('ModelStatistics', {});
    expect(all.model_stats.map((s) => s.name)).toEqual(
      expect.arrayContaining(['simple', 'classifier', 'identity_fp32']),
    );
    const err = await fx.fail('ModelStatistics', { name: 'nope' });
    expect(err.code).toBe(status.INVALID_ARGUMENT);
  });
});

describe('health and out-of-scope RPCs', () => {
  it('grpc.health.v1 Check: SERVING for the server, NOT_FOUND for an unknown service', async () => {
    expect(await fx.check('')).toEqual({ status: 'SERVING' });
    expect(await fx.check('inference.GRPCInferenceService')).toEqual({ status: 'SERVING' });
    await expect(fx.check('other.Service')).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it.each(['TraceSetting', 'LogSettings'])('%s → UNIMPLEMENTED', async (method) => {
    const err = await fx.fail(method, {});
    expect(err.code).toBe(status.UNIMPLEMENTED);
  });
});

describe('transport options clients use', () => {
  it('accepts gzip-compressed calls with custom metadata (simple_grpc_infer_client.py -C gzip)', async () => {
    const { GRPCInferenceService } = loadKserveClients();
    const client = new GRPCInferenceService(fx.address, credentials.createInsecure(), {
      ...CLIENT_OPTIONS,
      'grpc.default_compression_algorithm': 2,
    });
    try {
      const { response } = await invokeUnary(client, GRPCInferenceService.service, 'ModelInfer', simpleRequest(), {
        metadata: { test: '1' },
      });
      const res = response as { raw_output_contents: Buffer[] };
      expect(int32sOf(res.raw_output_contents[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    } finally {
      client.close();
    }
  });
});

describe('server lifecycle', () => {
  it('binds port 0 to a free port and closes idempotently with calls in flight', async () => {
    const { startKserveGrpcServer } = await import('./kserve-grpc-server.ts');
    const server = await startKserveGrpcServer(fx.core, { host: '127.0.0.1', port: 0 });
    expect(server.port).toBeGreaterThan(0);
    expect(server.port).not.toBe(fx.server.port);
    await Promise.all([server.close(), server.close()]);
    // The core belongs to the caller: the first server still answers.
    expect(await fx.call('ServerLive')).toEqual({ live: true });
  });
});
