import { IDENTITY_DATATYPES, type IdentityDatatype, identityModelName } from '@nvcf/models';
import {
  decodeHttpInferRequest,
  decodeHttpInferResponse,
  encodeHttpInferRequest,
  encodeHttpInferResponse,
  type Tensor,
  type TensorData,
} from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, outputOf, postInfer, startKserveFixture } from './kserve-test-fixture.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture();
});
afterAll(async () => {
  await fx?.close();
});

const infer = (model: string, body: Uint8Array | string, headers: Record<string, string> = {}) =>
  postInfer(fx.url, model, body, headers);

const utf8 = new TextEncoder();

/** Per datatype, 2×3 values that exercise its range: signs, extremes, BYTES that are not UTF-8. */
function identityData(datatype: IdentityDatatype, forJson: boolean): TensorData {
  switch (datatype) {
    case 'BOOL':
      return new Uint8Array([1, 0, 1, 1, 0, 0]);
    case 'UINT8':
      return new Uint8Array([0, 1, 127, 128, 254, 255]);
    case 'UINT16':
      return new Uint16Array([0, 1, 255, 256, 65534, 65535]);
    case 'UINT32':
      return new Uint32Array([0, 1, 65536, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]);
    case 'UINT64':
      // JSON numbers are exact only up to 2^53 on the way in.
      return forJson
        ? new BigUint64Array([0n, 1n, 2n ** 32n, 2n ** 40n, 2n ** 53n - 1n, 12345n])
        : new BigUint64Array([0n, 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]);
    case 'INT8':
      return new Int8Array([-128, -1, 0, 1, 126, 127]);
    case 'INT16':
      return new Int16Array([-32768, -1, 0, 1, 32766, 32767]);
    case 'INT32':
      return new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 2, 2 ** 31 - 1]);
    case 'INT64':
      return forJson
        ? new BigInt64Array([-(2n ** 53n) + 1n, -1n, 0n, 1n, 2n ** 40n, 2n ** 53n - 1n])
        : new BigInt64Array([-(2n ** 63n), -(2n ** 53n) - 1n, 0n, 1n, 2n ** 53n + 1n, 2n ** 63n - 1n]);
    case 'FP16':
      // 1, -2, 0.5, 65504 (max), 2^-24 (smallest subnormal), 0.333 (0x3555): all exact as JSON numbers.
      return new Uint16Array([0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x3555]);
    case 'FP32':
      return new Float32Array([1.5, -2.25, 0, 3.4028234663852886e38, 1.401298464324817e-45, Math.fround(0.1)]);
    case 'FP64':
      return new Float64Array([0.1, -1e308, 0, Number.MAX_VALUE, Number.MIN_VALUE, Math.PI]);
    case 'BYTES':
      return forJson
        ? ['hello', '', 'ünïcødé', '🙂', 'a b', '{"json":1}'].map((s) => utf8.encode(s))
        : [
            // ONNX Runtime for Node holds string tensors as JS strings: only UTF-8 without NUL gets through a
            // model (see the refusal tests below); binary still carries lengths, empties and multi-byte text.
            utf8.encode('ünïcødé 🙂'),
            new Uint8Array(0),
            utf8.encode('plain'),
            utf8.encode('\u007f\u0001'),
            new Uint8Array(300).fill(0x37),
            utf8.encode('x'),
          ];
  }
}

const comparable = (datatype: string, data: TensorData): unknown[] =>
  datatype === 'BYTES' ? (data as Uint8Array[]).map((b) => [...b]) : Array.from(data as ArrayLike<unknown>);

describe('identity round trips through every datatype', () => {
  for (const datatype of IDENTITY_DATATYPES) {
    const model = identityModelName(datatype);

    it(`${datatype} as JSON`, async () => {
      const data = identityData(datatype, true);
      const req = encodeHttpInferRequest({ inputs: [{ name: 'INPUT0', datatype, shape: [2, 3], data }] });
      const { res, decoded } = await infer(model, req.body);
      expect(res.headers.get('content-type')).toBe('application/json');
      const out = outputOf(decoded, 'OUTPUT0');
      expect(out.datatype).toBe(datatype);
      expect(out.shape).toEqual([2, 3]);
      expect(comparable(datatype, out.data)).toEqual(comparable(datatype, data));
    });

    it(`${datatype} as binary`, async () => {
      const data = identityData(datatype, false);
      const req = encodeHttpInferRequest(
        { inputs: [{ name: 'INPUT0', datatype, shape: [2, 3], data }] },
        { binaryInputs: true, binaryDataOutput: true },
      );
      const { res, decoded } = await infer(model, req.body, {
        'inference-header-content-length': String(req.inferenceHeaderContentLength),
      });
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      const out = outputOf(decoded, 'OUTPUT0');
      expect(out.datatype).toBe(datatype);
      expect(out.shape).toEqual([2, 3]);
      expect(comparable(datatype, out.data)).toEqual(comparable(datatype, data));
    });
  }

  it('refuses BYTES elements ONNX Runtime string tensors cannot hold (not UTF-8, NUL) with 400', async () => {
    for (const [element, match] of [
      [new Uint8Array([0xff, 0xfe]), 'UTF-8'],
      [new Uint8Array([0x61, 0, 0x62]), 'NUL'],
    ] as const) {
      const req = encodeHttpInferRequest(
        { inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: [element] }] },
        { binaryInputs: true, binaryDataOutput: true },
      );
      const res = await fetch(`${fx.url}/v2/models/identity_bytes/infer`, {
        method: 'POST',
        body: new Uint8Array(req.body),
        headers: { 'inference-header-content-length': String(req.inferenceHeaderContentLength) },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(match);
    }
  });

  // ONNX Runtime for Node cannot load a bf16 model, so no identity_bf16 exists: BF16 is exercised at the
  // codec level (what the server's decoder and encoder do with it) and refused by a model that is not BF16.
  it('BF16: the codecs round-trip it binary and refuse JSON; a non-BF16 model refuses it', async () => {
    const bf16: Tensor = {
      name: 'INPUT0',
      datatype: 'BF16',
      shape: [1, 4],
      data: new Uint16Array([0x3f80, 0xc000, 0x7f7f, 0x0001]),
    };
    const req = encodeHttpInferRequest({ inputs: [bf16] }, { binaryInputs: true });
    const decodedReq = decodeHttpInferRequest(req.body, {
      inferenceHeaderContentLength: String(req.inferenceHeaderContentLength),
    });
    expect(Array.from(decodedReq.inputs[0]?.data as Uint16Array)).toEqual([0x3f80, 0xc000, 0x7f7f, 0x0001]);
    const response = { model_name: 'm', model_version: '1', outputs: [{ ...bf16, name: 'OUTPUT0' }] };
    expect(() => encodeHttpInferResponse(response)).toThrow(/BF16/);
    const encoded = encodeHttpInferResponse(response, { binaryDataOutput: true });
    const back = decodeHttpInferResponse(encoded.body, encoded.inferenceHeaderContentLength);
    expect(Array.from(back.outputs[0]?.data as Uint16Array)).toEqual([0x3f80, 0xc000, 0x7f7f, 0x0001]);

    const res = await fetch(`${fx.url}/v2/models/identity_fp16/infer`, {
      method: 'POST',
      body: new Uint8Array(req.body),
      headers: { 'inference-header-content-length': String(req.inferenceHeaderContentLength) },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('BF16');
    const json = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'BF16', shape: [1, 1], data: [1] }] });
    const jsonRes = await fetch(`${fx.url}/v2/models/identity_fp16/infer`, { method: 'POST', body: json });
    expect(jsonRes.status).toBe(400);
  });
});
