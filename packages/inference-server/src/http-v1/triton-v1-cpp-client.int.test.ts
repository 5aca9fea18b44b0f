/**
 * Plays the old C++ client (libcrequest; TRTIS 1.x clients) against the KServe HTTP port: it learns a model
 * from the binary ServerStatus alone, builds its NV-InferRequest from the ModelConfig found there, infers with
 * `?format=binary`, sizes the raw outputs from NV-InferResponse and parses the remaining bytes as a binary
 * InferResponseHeader. Nothing here knows the models beyond their names.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';
import { decodeV1, parseV1Text } from '../triton-v1/v1-codec.ts';
import type { InferResponseHeaderMsg, RequestStatusMsg, ServerStatusMsg } from '../triton-v1/v1-messages.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

interface TensorConfig {
  name: string;
  data_type: string;
  dims: number[];
}
interface ModelConfigMsg {
  max_batch_size?: number;
  input: TensorConfig[];
  output: TensorConfig[];
}

const ELEMENT_SIZE: Record<string, number> = { TYPE_INT32: 4, TYPE_FP32: 4, TYPE_INT64: 8, TYPE_UINT8: 1 };

/** The client's error rule: HTTP ≠ 200 or NV-Status code ≠ SUCCESS, the header matched case-insensitively. */
function requestStatus(res: Response): RequestStatusMsg {
  const header = [...res.headers].find(([name]) => name.toLowerCase() === 'nv-status')?.[1] ?? '';
  const status = parseV1Text('RequestStatus', header, 'NV-Status') as RequestStatusMsg;
  if (res.status !== 200 || status.code !== 'SUCCESS') throw new Error(`request failed: ${res.status} ${header}`);
  return status;
}

/** ServerStatusHttpContext: GET api/status/<model>?format=binary, ParseFromString. */
async function serverStatus(model: string): Promise<ServerStatusMsg> {
  const res = await fetch(`${fx.url}/api/status/${model}?format=binary`);
  requestStatus(res);
  return decodeV1('ServerStatus', new Uint8Array(await res.arrayBuffer())) as unknown as ServerStatusMsg;
}

/**
 * InferHttpContext::Create + Run: inputs and outputs from the config in the status, dims only where the config
 * has -1, batch_byte_size on every input, the raw input bytes concatenated in header order.
 */
async function run(
  model: string,
  batchSize: number,
  inputs: Record<string, { data: Uint8Array; dims?: number[] }>,
): Promise<{ outputs: Map<string, Uint8Array>; header: InferResponseHeaderMsg; trailer: InferResponseHeaderMsg }> {
  const status = await serverStatus(model);
  const modelStatus = status.model_status[model];
  expect(Object.values(modelStatus?.version_status ?? {}).some((v) => v.ready_state === 'MODEL_READY')).toBe(true);
  const config = modelStatus?.config as ModelConfigMsg;
  if ((config.max_batch_size ?? 0) === 0) expect(batchSize).toBe(1);
  else expect(batchSize).toBeLessThanOrEqual(config.max_batch_size!);

  const parts = config.input.map((spec) => {
    const given = inputs[spec.name];
    if (!given) throw new Error(`no data for ${spec.name}`);
    const variable = spec.dims.some((d) => d < 0);
    const dims = variable ? given.dims! : spec.dims;
    const expected = batchSize * dims.reduce((a, b) => a * b, 1) * ELEMENT_SIZE[spec.data_type]!;
    expect(given.data.byteLength).toBe(expected);
    const dimsText = variable ? dims.map((d) => ` dims: ${d}`).join('') : '';
    return { text: `input { name: "${spec.name}"${dimsText} batch_byte_size: ${expected} }`, data: given.data };
  });
  const outputsText = config.output.map((o) => `output { name: "${o.name}" }`).join(' ');
  const header = `batch_size: ${batchSize} ${parts.map((p) => p.text).join(' ')} ${outputsText}`;

  const body = Buffer.concat(parts.map((p) => p.data));
  const res = await fetch(`${fx.url}/api/infer/${model}?format=binary`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/octet-stream', 'NV-InferRequest': header },
  });
  requestStatus(res);
  const responseHeader = parseV1Text(
    'InferResponseHeader',
    res.headers.get('NV-InferResponse') ?? '',
    'NV-InferResponse',
  ) as unknown as InferResponseHeaderMsg;
  const bytes = new Uint8Array(await res.arrayBuffer());
  const outputs = new Map<string, Uint8Array>();
  let offset = 0;
  for (const output of responseHeader.output) {
    const size = output.raw?.batch_byte_size ?? 0;
    outputs.set(output.name, bytes.subarray(offset, offset + size));
    offset += size;
  }
  const trailer = decodeV1('InferResponseHeader', bytes.subarray(offset)) as unknown as InferResponseHeaderMsg;
  return { outputs, header: responseHeader, trailer };
}

const int32s = (values: number[]) => new Uint8Array(Int32Array.from(values).buffer);
const int32sOf = (b: Uint8Array) => [...new Int32Array(Uint8Array.from(b).buffer)];

describe('the v1 C++ client sequence', () => {
  it('simple_client: status, then INPUT0 = 0..15 and INPUT1 = ones at batch 1 and 4', async () => {
    for (const batch of [1, 4]) {
      const input0 = Array.from({ length: 16 * batch }, (_, i) => i % 16);
      const { outputs, header, trailer } = await run('simple', batch, {
        INPUT0: { data: int32s(input0) },
        INPUT1: { data: int32s(Array(16 * batch).fill(1)) },
      });
      expect(int32sOf(outputs.get('OUTPUT0')!)).toEqual(input0.map((v) => v + 1));
      expect(int32sOf(outputs.get('OUTPUT1')!)).toEqual(input0.map((v) => v - 1));
      expect(trailer).toMatchObject({ model_name: 'simple', model_version: 1, batch_size: batch });
      expect(trailer.output.map((o) => o.raw)).toEqual(header.output.map((o) => o.raw));
    }
  });

  it('a model with a variable dimension: dims from the client, output dims in the header', async () => {
    const values = Float32Array.from({ length: 3 * 7 }, (_, i) => i * 0.5);
    const { outputs, trailer } = await run('identity_fp32', 3, {
      INPUT0: { data: new Uint8Array(values.buffer), dims: [7] },
    });
    expect([...new Float32Array(outputs.get('OUTPUT0')!.slice().buffer)]).toEqual([...values]);
    expect(trailer.output[0]).toEqual({
      name: 'OUTPUT0',
      raw: { dims: [7], batch_byte_size: 84 },
      data_type: 'TYPE_FP32',
    });
  });

  it('tolerates Expect: 100-continue, which the client disables but curl sends for large bodies', async () => {
    const body = Buffer.concat([int32s(Array.from({ length: 16 }, (_, i) => i)), int32s(Array(16).fill(1))]);
    const { status, nvStatus, bytes } = await new Promise<{ status: number; nvStatus: string; bytes: Buffer }>(
      (resolve, reject) => {
        const req = request(`${fx.url}/api/infer/simple`, {
          method: 'POST',
          headers: {
            Expect: '100-continue',
            'Content-Length': body.length,
            'NV-InferRequest':
              'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT0" }',
          },
        });
        req.on('continue', () => req.end(body));
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              nvStatus: String(res.headers['nv-status']),
              bytes: Buffer.concat(chunks),
            }),
          );
        });
        req.on('error', reject);
      },
    );
    expect(status).toBe(200);
    expect(nvStatus).toContain('code: SUCCESS');
    expect(int32sOf(bytes.subarray(0, 64))).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });
});
