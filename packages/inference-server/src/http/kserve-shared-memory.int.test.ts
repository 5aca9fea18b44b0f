import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCreatesRegions, shmFile } from '../shm/shm-test-client.ts';
import { type KserveFixture, simpleInputs, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
const tag = randomUUID().slice(0, 8);
const inKey = `/nvcf_test_in_${tag}`;
const outKey = `/nvcf_test_out_${tag}`;
const file = shmFile;

const post = (path: string, body?: unknown) =>
  fetch(`${fx.url}${path}`, {
    method: 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

const shmInput = (name: string, region: string, byteSize: number, offset?: number) => ({
  name,
  datatype: 'INT32',
  shape: [1, 16],
  parameters: {
    shared_memory_region: region,
    shared_memory_byte_size: byteSize,
    ...(offset === undefined ? {} : { shared_memory_offset: offset }),
  },
});
const shmOutput = (name: string, byteSize: number, offset: number) => ({
  name,
  parameters: {
    shared_memory_region: 'output_data',
    shared_memory_byte_size: byteSize,
    shared_memory_offset: offset,
    binary_data: false,
  },
});

beforeAll(async () => {
  fx = await startKserveFixture({}, (dir) => writeTritonExampleModels(dir));
  const { input0, input1 } = simpleInputs();
  clientCreatesRegions(inKey, outKey, input0, input1);
});
afterAll(async () => {
  await fx?.close();
  rmSync(file(inKey), { force: true });
  rmSync(file(outKey), { force: true });
  rmSync(file(`${inKey}_s`), { force: true });
  rmSync(file(`${outKey}_s`), { force: true });
});

describe('system shared memory (simple_http_shm_client.py flow)', () => {
  it('clears both kinds, registers, infers through regions, reports status, unregisters', async () => {
    expect((await post('/v2/systemsharedmemory/unregister')).status).toBe(200);
    expect((await post('/v2/cudasharedmemory/unregister')).status).toBe(200);

    const reg = await post('/v2/systemsharedmemory/region/output_data/register', {
      key: outKey,
      offset: 0,
      byte_size: 128,
    });
    expect(reg.status).toBe(200);
    expect(await reg.text()).toBe('');
    expect(
      (await post('/v2/systemsharedmemory/region/input_data/register', { key: inKey, offset: 0, byte_size: 128 }))
        .status,
    ).toBe(200);

    const res = await post('/v2/models/simple/infer', {
      inputs: [shmInput('INPUT0', 'input_data', 64), shmInput('INPUT1', 'input_data', 64, 64)],
      outputs: [shmOutput('OUTPUT0', 64, 0), shmOutput('OUTPUT1', 64, 64)],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { outputs: Record<string, unknown>[] };
    // An output that went to shared memory is listed without data or parameters.
    expect(body.outputs).toEqual([
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16] },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16] },
    ]);
    // The client reads the results from its own object.
    const out = readFileSync(file(outKey));
    const { input0, input1 } = simpleInputs();
    const ints = (from: number) => Array.from({ length: 16 }, (_, i) => out.readInt32LE(from + i * 4));
    expect(ints(0)).toEqual([...input0].map((v, i) => v + (input1[i] ?? 0)));
    expect(ints(64)).toEqual([...input0].map((v, i) => v - (input1[i] ?? 0)));

    const status = (await (await fetch(`${fx.url}/v2/systemsharedmemory/status`)).json()) as unknown[];
    expect(status).toEqual(
      expect.arrayContaining([
        { name: 'input_data', key: inKey, offset: 0, byte_size: 128 },
        { name: 'output_data', key: outKey, offset: 0, byte_size: 128 },
      ]),
    );
    const one = await fetch(`${fx.url}/v2/systemsharedmemory/region/input_data/status`);
    expect(await one.json()).toEqual([{ name: 'input_data', key: inKey, offset: 0, byte_size: 128 }]);

    expect((await post('/v2/systemsharedmemory/region/input_data/unregister')).status).toBe(200);
    const gone = await fetch(`${fx.url}/v2/systemsharedmemory/region/input_data/status`);
    expect(gone.status).toBe(404);
    expect(await errorOf(gone)).toBe("Unable to find system shared memory region: 'input_data'");
    expect((await post('/v2/systemsharedmemory/unregister')).status).toBe(200);
    expect(await (await fetch(`${fx.url}/v2/systemsharedmemory/status`)).json()).toEqual([]);
  });

  it("refuses bad registrations with Triton's words", async () => {
    await post('/v2/systemsharedmemory/unregister');
    const register = (name: string, body: unknown) => post(`/v2/systemsharedmemory/region/${name}/register`, body);
    const cases: [string, unknown, number, string][] = [
      ['a', { byte_size: 8 }, 400, "Shared memory register request has no 'key' field"],
      ['a', { key: inKey }, 400, "Shared memory register request has no 'byte_size' field"],
      [
        'a',
        { key: '/nvcf_missing_object', byte_size: 8 },
        500,
        "Unable to open shared memory region: '/nvcf_missing_object'",
      ],
      [
        'a',
        { key: inKey, offset: 64, byte_size: 128 },
        400,
        "failed to register shared memory region 'a': invalid args",
      ],
      [
        'a',
        { key: '/../etc/passwd', byte_size: 8 },
        400,
        "cannot register shared memory region 'a' - invalid shm key '/../etc/passwd'",
      ],
      ['a', { key: '///', byte_size: 8 }, 400, "cannot register shared memory region 'a' - invalid shm key '///'"],
    ];
    for (const [name, body, status, error] of cases) {
      const res = await register(name, body);
      expect(res.status, error).toBe(status);
      expect(await errorOf(res)).toBe(error);
    }
    expect((await register('a', { key: inKey, byte_size: 128 })).status).toBe(200);
    const twice = await register('a', { key: inKey, byte_size: 128 });
    expect(twice.status).toBe(400);
    expect(await errorOf(twice)).toBe("shared memory region 'a' already in manager");
    const nameless = await post('/v2/systemsharedmemory/register', { key: inKey, byte_size: 8 });
    expect(await errorOf(nameless)).toBe("'region name' is necessary to register system shared memory region");
    const wrongMethod = await post('/v2/systemsharedmemory/status');
    expect(wrongMethod.status).toBe(405);
    await post('/v2/systemsharedmemory/unregister');
  });

  it("refuses inferences that reach outside a region, or that do not fit, with Triton's words", async () => {
    await post('/v2/systemsharedmemory/unregister');
    await post('/v2/systemsharedmemory/region/input_data/register', { key: inKey, byte_size: 128 });
    await post('/v2/systemsharedmemory/region/output_data/register', { key: outKey, byte_size: 128 });
    const infer = (inputs: unknown[], outputs?: unknown[]) =>
      post('/v2/models/simple/infer', { inputs, ...(outputs ? { outputs } : {}) });
    const good1 = shmInput('INPUT1', 'input_data', 64, 64);
    const cases: [unknown[], unknown[] | undefined, number, string][] = [
      [[shmInput('INPUT0', 'nope', 64), good1], undefined, 404, "Unable to find shared memory region: 'nope'"],
      [
        [shmInput('INPUT0', 'input_data', 64, 128), good1],
        undefined,
        400,
        "Invalid offset for shared memory region: 'input_data'",
      ],
      [
        [shmInput('INPUT0', 'input_data', 64, 96), good1],
        undefined,
        400,
        "Invalid offset + byte size for shared memory region: 'input_data'",
      ],
      [
        [shmInput('INPUT0', 'input_data', 64), good1],
        [shmOutput('OUTPUT0', 32, 0)],
        500,
        "shared memory size specified with the request for output 'OUTPUT0' (32 bytes) should be at least 64 bytes to hold the results",
      ],
      [
        [{ ...shmInput('INPUT0', 'input_data', 64), data: new Array(16).fill(1) }, good1],
        undefined,
        400,
        "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set 'data' 'shared_memory_region'",
      ],
      [
        [shmInput('INPUT0', 'input_data', 64), good1],
        [
          {
            name: 'OUTPUT0',
            parameters: { shared_memory_region: 'output_data', shared_memory_byte_size: 64, binary_data: true },
          },
        ],
        400,
        "Output can't set both 'shared_memory_region' and 'binary_data'",
      ],
    ];
    for (const [inputs, outputs, status, error] of cases) {
      const res = await infer(inputs, outputs);
      expect(res.status, error).toBe(status);
      expect(await errorOf(res)).toBe(error);
    }
    await post('/v2/systemsharedmemory/unregister');
  });

  it('answers CUDA shared memory as a server without GPUs, and lists both extensions', async () => {
    expect(await (await fetch(`${fx.url}/v2/cudasharedmemory/status`)).json()).toEqual([]);
    const reg = await post('/v2/cudasharedmemory/region/gpu0/register', {
      raw_handle: { b64: '' },
      device_id: 0,
      byte_size: 8,
    });
    expect(reg.status).toBe(400);
    expect(await errorOf(reg)).toBe("failed to register CUDA shared memory region: 'gpu0', GPUs not supported");
    expect((await post('/v2/cudasharedmemory/region/gpu0/unregister')).status).toBe(200);
    const meta = (await (await fetch(`${fx.url}/v2`)).json()) as { extensions: string[] };
    expect(meta.extensions).toEqual(expect.arrayContaining(['system_shared_memory', 'cuda_shared_memory']));
  });

  it('carries serialized BYTES both ways, in regions sized exactly (simple_http_shm_string_client.py)', async () => {
    /** Triton's BYTES serialization: each element as a 4-byte little-endian length, then its bytes. */
    const serialize = (values: string[]) =>
      Buffer.concat(values.flatMap((v) => [Buffer.from(Uint32Array.of(Buffer.byteLength(v)).buffer), Buffer.from(v)]));
    const in0 = serialize(Array.from({ length: 16 }, (_, i) => String(i)));
    const in1 = serialize(Array.from({ length: 16 }, () => '1'));
    const sums = serialize(Array.from({ length: 16 }, (_, i) => String(i + 1)));
    const diffs = serialize(Array.from({ length: 16 }, (_, i) => String(i - 1)));
    expect([in0.length, in1.length, sums.length, diffs.length]).toEqual([86, 80, 87, 86]);
    const inFile = file(`${inKey}_s`);
    const outFile = file(`${outKey}_s`);
    writeFileSync(inFile, Buffer.concat([in0, in1]));
    writeFileSync(outFile, Buffer.alloc(sums.length + diffs.length));
    await post('/v2/systemsharedmemory/unregister');
    await post('/v2/systemsharedmemory/region/input_data/register', { key: `${inKey}_s`, offset: 0, byte_size: 166 });
    await post('/v2/systemsharedmemory/region/output_data/register', { key: `${outKey}_s`, offset: 0, byte_size: 173 });
    const bytes = (name: string, byteSize: number, offset: number) => ({
      name,
      datatype: 'BYTES',
      shape: [1, 16],
      parameters: {
        shared_memory_region: 'input_data',
        shared_memory_byte_size: byteSize,
        shared_memory_offset: offset,
      },
    });
    const res = await post('/v2/models/simple_string/infer', {
      inputs: [bytes('INPUT0', 86, 0), bytes('INPUT1', 80, 86)],
      outputs: [
        { name: 'OUTPUT0', parameters: { shared_memory_region: 'output_data', shared_memory_byte_size: 87 } },
        {
          name: 'OUTPUT1',
          parameters: { shared_memory_region: 'output_data', shared_memory_byte_size: 86, shared_memory_offset: 87 },
        },
      ],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(readFileSync(outFile)).toEqual(Buffer.concat([sums, diffs]));
    await post('/v2/systemsharedmemory/unregister');
  });
});
