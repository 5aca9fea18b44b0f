import { writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({}, (dir) => writeTritonExampleModels(dir));
});
afterAll(async () => {
  await fx?.close();
});

interface Output {
  name: string;
  datatype: string;
  shape: number[];
  data: unknown[];
}
const infer = async (model: string, body: unknown) => {
  const res = await fetch(`${fx.url}/v2/models/${model}/infer`, { method: 'POST', body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  const { outputs } = (await res.json()) as { outputs: Output[] };
  return Object.fromEntries(outputs.map((o) => [o.name, o]));
};
const range16 = Array.from({ length: 16 }, (_, i) => i);
const ones16 = Array.from({ length: 16 }, () => 1);

describe("Triton's example models, as its clients call them", () => {
  it('simple_string: decimal strings in, sums and differences as decimal strings out (simple_http_string_infer_client.py)', async () => {
    const tensor = (name: string, values: number[]) => ({
      name,
      datatype: 'BYTES',
      shape: [1, 16],
      data: values.map(String),
    });
    const out = await infer('simple_string', { inputs: [tensor('INPUT0', range16), tensor('INPUT1', ones16)] });
    expect(out.OUTPUT0).toMatchObject({ datatype: 'BYTES', shape: [1, 16] });
    expect(out.OUTPUT0?.data).toEqual(range16.map((v) => String(v + 1)));
    expect(out.OUTPUT1?.data).toEqual(range16.map((v) => String(v - 1)));
  });

  it('simple_int8: the INT8 variant of simple (grpc_explicit_int8_content_client.py values)', async () => {
    const tensor = (name: string, values: number[]) => ({ name, datatype: 'INT8', shape: [1, 16], data: values });
    const out = await infer('simple_int8', { inputs: [tensor('INPUT0', range16), tensor('INPUT1', ones16)] });
    expect(out.OUTPUT0).toMatchObject({ datatype: 'INT8', shape: [1, 16], data: range16.map((v) => v + 1) });
    expect(out.OUTPUT1?.data).toEqual(range16.map((v) => v - 1));
  });

  it('custom_identity_int32: echoes a variable-length INT32 input', async () => {
    const data = [7, -3, 2147483647, -2147483648, 0];
    const out = await infer('custom_identity_int32', {
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 5], data }],
    });
    expect(out.OUTPUT0).toMatchObject({ datatype: 'INT32', shape: [1, 5], data });
  });

  it('simple_identity: echoes BYTES byte for byte, NULs and non-UTF-8 included (simple_http_string_infer_client.py)', async () => {
    const elements = [Buffer.from('he\u0000llo'), Buffer.from([0, 1, 2, 3]), Buffer.from([0xff, 0xfe, 0x00])];
    // Binary form: each element as a 4-byte little-endian length, then its bytes.
    const binary = Buffer.concat(elements.flatMap((e) => [Buffer.from(Uint32Array.of(e.length).buffer), e]));
    const header = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 3], parameters: { binary_data_size: binary.length } }],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
      }),
    );
    const res = await fetch(`${fx.url}/v2/models/simple_identity/infer`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, binary]),
    });
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const json = Number(res.headers.get('inference-header-content-length'));
    expect(JSON.parse(body.subarray(0, json).toString())).toMatchObject({
      model_name: 'simple_identity',
      outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1, 3], parameters: { binary_data_size: binary.length } }],
    });
    expect(body.subarray(json)).toEqual(binary);
    const config = (await (await fetch(`${fx.url}/v2/models/simple_identity/config`)).json()) as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({ name: 'simple_identity', backend: 'identity', max_batch_size: 8 });
  });

  it('simple_identity refuses what a session would, with the same texts', async () => {
    const res = await fetch(`${fx.url}/v2/models/simple_identity/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT9', datatype: 'BYTES', shape: [1, 1], data: ['x'] }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe(
      "unexpected inference input 'INPUT9' for model 'simple_identity'",
    );
  });

  it("reports Triton's metadata: a -1 batch dimension before the config dims", async () => {
    const meta = async (model: string) =>
      (await (await fetch(`${fx.url}/v2/models/${model}`)).json()) as Record<string, unknown>;
    expect(await meta('simple_string')).toMatchObject({
      inputs: [
        { name: 'INPUT0', datatype: 'BYTES', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'BYTES', shape: [-1, 16] },
      ],
    });
    expect(await meta('simple_int8')).toMatchObject({
      outputs: [{ name: 'OUTPUT0', datatype: 'INT8', shape: [-1, 16] }, expect.anything()],
    });
    expect(await meta('custom_identity_int32')).toMatchObject({
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [-1, -1] }],
    });
  });

  it("repeat_int32 is decoupled: HTTP infer refuses it with Triton's words, its config says so", async () => {
    const res = await fetch(`${fx.url}/v2/models/repeat_int32/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] }),
    });
    expect(res.status).toBe(501);
    expect(await res.json()).toEqual({
      error: "HTTP end point doesn't support models with decoupled transaction policy",
    });
    const config = (await (await fetch(`${fx.url}/v2/models/repeat_int32/config`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({ backend: 'repeat', model_transaction_policy: { decoupled: true } });
  });

  describe('sequences (simple_http_sequence_sync_infer_client.py values)', () => {
    const values = [11, 7, 5, 3, 2, 0, 1];
    /** One sequence, request by request as the sync client sends it: START first, END last. */
    const run = async (model: string, id: number | string, inputs: number[]) => {
      const outputs: number[] = [];
      for (const [i, value] of inputs.entries()) {
        const parameters = {
          sequence_id: id,
          ...(i === 0 ? { sequence_start: true } : {}),
          ...(i === inputs.length - 1 ? { sequence_end: true } : {}),
        };
        const out = await infer(model, {
          parameters,
          inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
          outputs: [{ name: 'OUTPUT' }],
        });
        outputs.push(...((out.OUTPUT?.data ?? []) as number[]));
      }
      return outputs;
    };
    const a = [0, ...values];
    const b = [100, ...values.map((v) => -v)];

    it('simple_sequence: what the default mode asserts for A (1000), B (1001) and a string id', async () => {
      expect(await run('simple_sequence', 1000, a)).toEqual([1, 11, 7, 5, 3, 2, 0, 1]);
      expect(await run('simple_sequence', 1001, b)).toEqual([101, -11, -7, -5, -3, -2, 0, -1]);
      expect(await run('simple_sequence', '1002', [20, ...values.map((v) => -v)])).toEqual([
        21, -11, -7, -5, -3, -2, 0, -1,
      ]);
    });

    it('simple_dyna_sequence: the correlation id is added at END (-d mode)', async () => {
      expect(await run('simple_dyna_sequence', 1000, a)).toEqual([1, 11, 7, 5, 3, 2, 0, 1001]);
      expect(await run('simple_dyna_sequence', 1001, b)).toEqual([101, -11, -7, -5, -3, -2, 0, 1000]);
    });

    it('simple_string_dyna_sequence: a true running sum per string id, plus the id at END (-d mode, S)', async () => {
      expect(await run('simple_string_dyna_sequence', '1002', [20, ...values.map((v) => -v)])).toEqual([
        20, 9, 2, -3, -6, -8, -8, 993,
      ]);
      const config = await (await fetch(`${fx.url}/v2/models/simple_string_dyna_sequence/config`)).json();
      expect(config).toMatchObject({ backend: 'dyna_sequence' });
    });

    it("refuses requests outside a sequence with Triton's words", async () => {
      const send = (parameters: Record<string, unknown>, shape = [1, 1]) =>
        fetch(`${fx.url}/v2/models/simple_sequence/infer`, {
          method: 'POST',
          body: JSON.stringify({
            parameters,
            inputs: [{ name: 'INPUT', datatype: 'INT32', shape, data: new Array(shape[0]).fill(1) }],
          }),
        });
      const error = async (res: Response) => {
        expect(res.status).toBe(400);
        return ((await res.json()) as { error: string }).error;
      };
      expect(await error(await send({}))).toBe(
        "inference request to model 'simple_sequence' must specify a non-zero or non-empty correlation ID",
      );
      expect(await error(await send({ sequence_id: 77 }))).toBe(
        "inference request for sequence 77 to model 'simple_sequence' must specify the START flag on the first request of the sequence",
      );
      expect(await error(await send({ sequence_id: 78, sequence_start: true }, [2, 1]))).toBe(
        "inference request to model 'simple_sequence' must specify batch-size 1 due to requirements of sequence batcher",
      );
      // A sequence that ended needs a new START.
      expect((await send({ sequence_id: 79, sequence_start: true, sequence_end: true })).status).toBe(200);
      expect(await error(await send({ sequence_id: 79 }))).toContain('must specify the START flag');
    });

    it("reports only the request inputs in metadata (the controls are the batcher's)", async () => {
      const meta = (await (await fetch(`${fx.url}/v2/models/simple_dyna_sequence`)).json()) as { inputs: unknown[] };
      expect(meta.inputs).toEqual([{ name: 'INPUT', datatype: 'INT32', shape: [-1, 1] }]);
    });
  });
});
