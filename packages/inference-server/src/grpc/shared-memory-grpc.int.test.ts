import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCreatesRegions, shmFile } from '../shm/shm-test-client.ts';
import { createSystemSharedMemory } from '../shm/system-shared-memory.ts';
import { type GrpcFixture, startGrpcFixture } from './grpc-test-fixture.ts';

let fx: GrpcFixture;
const tag = randomUUID().slice(0, 8);
const inKey = `/nvcf_grpc_in_${tag}`;
const outKey = `/nvcf_grpc_out_${tag}`;
const file = shmFile;
const input0 = Array.from({ length: 16 }, (_, i) => i);
const input1 = Array.from({ length: 16 }, () => 1);

const str = (s: string) => ({ string_param: s, parameter_choice: 'string_param' });
const i64 = (n: number) => ({ int64_param: String(n), parameter_choice: 'int64_param' });
const shmTensor = (region: string, byteSize: number, offset: number) => ({
  shared_memory_region: str(region),
  shared_memory_byte_size: i64(byteSize),
  shared_memory_offset: i64(offset),
});
const simpleShmRequest = (outputBytes = 64) => ({
  model_name: 'simple',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: shmTensor('input_data', 64, 0) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmTensor('input_data', 64, 64) },
  ],
  outputs: [
    { name: 'OUTPUT0', parameters: shmTensor('output_data', outputBytes, 0) },
    { name: 'OUTPUT1', parameters: shmTensor('output_data', outputBytes, 64) },
  ],
});

beforeAll(async () => {
  clientCreatesRegions(inKey, outKey, input0, input1);
  // As Triton with --allow-client-shm=true.
  fx = await startGrpcFixture('shm', undefined, { sharedMemory: createSystemSharedMemory({ allowClientShm: true }) });
});
afterAll(async () => {
  await fx?.close();
  rmSync(file(inKey), { force: true });
  rmSync(file(outKey), { force: true });
});

describe('system shared memory over gRPC (simple_grpc_shm_client.py flow)', () => {
  it('registers, infers through regions, reports status, unregisters', async () => {
    expect(await fx.call('SystemSharedMemoryUnregister', { name: '' })).toEqual({});
    expect(await fx.call('CudaSharedMemoryUnregister', { name: '' })).toEqual({});
    await fx.call('SystemSharedMemoryRegister', { name: 'output_data', key: outKey, offset: 0, byte_size: 128 });
    await fx.call('SystemSharedMemoryRegister', { name: 'input_data', key: inKey, offset: 0, byte_size: 128 });

    const res = await fx.call<{ outputs: { name: string; shape: string[] }[]; raw_output_contents: Buffer[] }>(
      'ModelInfer',
      simpleShmRequest(),
    );
    expect(res.outputs.map((o) => [o.name, o.shape])).toEqual([
      ['OUTPUT0', ['1', '16']],
      ['OUTPUT1', ['1', '16']],
    ]);
    // Kept for index alignment, empty: the data is in the client's region.
    expect(res.raw_output_contents.map((b) => b.length)).toEqual([0, 0]);
    const out = readFileSync(file(outKey));
    const ints = (from: number) => Array.from({ length: 16 }, (_, i) => out.readInt32LE(from + i * 4));
    expect(ints(0)).toEqual(input0.map((v, i) => v + (input1[i] ?? 0)));
    expect(ints(64)).toEqual(input0.map((v, i) => v - (input1[i] ?? 0)));

    const all = await fx.call<{ regions: Record<string, { key: string; byte_size: string }> }>(
      'SystemSharedMemoryStatus',
      { name: '' },
    );
    expect(Object.keys(all.regions).sort()).toEqual(['input_data', 'output_data']);
    expect(all.regions.input_data).toMatchObject({ name: 'input_data', key: inKey, byte_size: '128' });
    expect((await fx.call('CudaSharedMemoryStatus', { name: '' })) as unknown).toEqual({ regions: {} });

    const twice = await fx.fail('SystemSharedMemoryRegister', { name: 'input_data', key: inKey, byte_size: 128 });
    expect(twice.code).toBe(status.ALREADY_EXISTS);
    expect(twice.details).toBe("shared memory region 'input_data' already in manager");

    const small = await fx.fail('ModelInfer', simpleShmRequest(32));
    expect(small.code).toBe(status.INTERNAL);
    expect(small.details).toContain("for output 'OUTPUT0' (32 bytes) should be at least 64 bytes");

    await fx.call('SystemSharedMemoryUnregister', { name: 'input_data' });
    const gone = await fx.fail('SystemSharedMemoryStatus', { name: 'input_data' });
    expect(gone.code).toBe(status.NOT_FOUND);
    const unknownRegion = await fx.fail('ModelInfer', simpleShmRequest());
    expect(unknownRegion.code).toBe(status.NOT_FOUND);
    expect(unknownRegion.details).toBe("Unable to find shared memory region: 'input_data'");
    await fx.call('SystemSharedMemoryUnregister', { name: '' });
    expect(await fx.call('SystemSharedMemoryStatus', { name: '' })).toEqual({ regions: {} });
  });

  it("refuses malformed shared memory inputs and CUDA registration with Triton's words", async () => {
    await fx.call('SystemSharedMemoryRegister', { name: 'input_data', key: inKey, byte_size: 128 });
    const withContents = await fx.fail('ModelInfer', {
      model_name: 'simple',
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'INT32',
          shape: [1, 16],
          parameters: shmTensor('input_data', 64, 0),
          contents: { int_contents: input0 },
        },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmTensor('input_data', 64, 64) },
      ],
    });
    expect(withContents.details).toBe(
      "unexpected 'content' provided when using shared memory for input tensor 'INPUT0' for model 'simple'",
    );
    const noSize = await fx.fail('ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { shared_memory_region: str('input_data') } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmTensor('input_data', 64, 64) },
      ],
    });
    expect(noSize.details).toBe(
      "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'",
    );
    const cuda = await fx.fail('CudaSharedMemoryRegister', { name: 'gpu', raw_handle: Buffer.alloc(64), byte_size: 8 });
    expect(cuda.code).toBe(status.INVALID_ARGUMENT);
    expect(cuda.details).toBe("failed to register CUDA shared memory region: 'gpu', GPUs not supported");
    await fx.call('SystemSharedMemoryUnregister', { name: '' });
  });

  it('refuses registration when client shared memory is off (Triton without --allow-client-shm)', async () => {
    const off = await startGrpcFixture('shm-off', undefined, {
      sharedMemory: createSystemSharedMemory({ allowClientShm: false }),
    });
    try {
      const err = await off.fail('SystemSharedMemoryRegister', { name: 'x', key: inKey, byte_size: 8 });
      expect(err.code).toBe(status.UNIMPLEMENTED);
      expect(err.details).toContain('Client shared memory is disabled');
      expect(await off.call('SystemSharedMemoryStatus', { name: '' })).toEqual({ regions: {} });
    } finally {
      await off.close();
    }
  });
});
