import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { appErrorOf } from '../app-error-of.ts';
import { parseInferRequest } from '../infer-request-json.ts';
import { jsonCarries, mixedRequestArb } from './binary-arbitraries.ts';
import { type DecodeHttpInferRequestOptions, decodeHttpInferRequest } from './http-infer-request.ts';
import { encodeHttpInferRequest } from './http-infer-request-encoder.ts';

/** A body of JSON followed by blobs, and the header value that splits it. */
function withBinary(json: unknown, ...blobs: Uint8Array[]): { body: Buffer; header: string } {
  const head = Buffer.from(JSON.stringify(json));
  return { body: Buffer.concat([head, ...blobs]), header: String(head.byteLength) };
}

const le = {
  u32: (...v: number[]) => Buffer.from(new Uint32Array(v).buffer),
  i32: (...v: number[]) => Buffer.from(new Int32Array(v).buffer),
  f32: (...v: number[]) => Buffer.from(new Float32Array(v).buffer),
  bytes: (...items: string[]) => Buffer.concat(items.flatMap((s) => [le.u32(Buffer.byteLength(s)), Buffer.from(s)])),
};

function decode(body: Uint8Array, header?: string | null, opts?: DecodeHttpInferRequestOptions) {
  return decodeHttpInferRequest(body, { inferenceHeaderContentLength: header }, opts);
}

function invalid(body: Uint8Array, header?: string | null, opts?: DecodeHttpInferRequestOptions): string {
  const err = appErrorOf(() => decode(body, header, opts));
  expect(err.code).toBe('INVALID_ARGUMENT');
  return err.message;
}

const binaryInput = (name: string, datatype: string, shape: number[], size: unknown, extra: object = {}) => ({
  name,
  datatype,
  shape,
  parameters: { binary_data_size: size },
  ...extra,
});

describe('decodeHttpInferRequest: layouts', () => {
  it('decodes a body without the header as plain JSON', () => {
    const json = { id: '7', inputs: [{ name: 'X', datatype: 'INT32', shape: [2], data: [1, 2] }] };
    expect(decode(Buffer.from(JSON.stringify(json)))).toEqual(parseInferRequest(json));
  });

  it("decodes the binary extension's documented example", () => {
    const { body, header } = withBinary(
      {
        model_name: 'mymodel',
        inputs: [binaryInput('input0', 'UINT32', [2, 2], 16), binaryInput('input1', 'BOOL', [3], 3)],
        outputs: [{ name: 'output0', parameters: { binary_data: true } }],
      },
      le.u32(1, 2, 3, 4),
      Uint8Array.from([1, 0, 1]),
    );
    expect(decode(body, header)).toEqual({
      inputs: [
        { name: 'input0', datatype: 'UINT32', shape: [2, 2], data: new Uint32Array([1, 2, 3, 4]) },
        { name: 'input1', datatype: 'BOOL', shape: [3], data: Uint8Array.from([1, 0, 1]) },
      ],
      outputs: [{ name: 'output0', parameters: { binary_data: true } }],
    });
  });

  it('decodes a mixed request (simple_http_infer_client: INPUT0 JSON, INPUT1 binary)', () => {
    const ones = Array(16).fill(1);
    const { body, header } = withBinary(
      {
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [...Array(16).keys()] },
          binaryInput('INPUT1', 'INT32', [1, 16], 64),
        ],
        outputs: [
          { name: 'OUTPUT0', parameters: { binary_data: true } },
          { name: 'OUTPUT1', parameters: { binary_data: false } },
        ],
      },
      le.i32(...ones),
    );
    const req = decode(body, header);
    expect(req.inputs.map((t) => t.data)).toEqual([Int32Array.from(Array(16).keys()), Int32Array.from(ones)]);
  });

  it('keeps other tensor parameters and drops binary_data_size', () => {
    const { body, header } = withBinary(
      { inputs: [binaryInput('S', 'BYTES', [2], 11, { parameters: { binary_data_size: 11, keep: 'me' } })] },
      le.bytes('abc', ''),
      Buffer.from('zzzz'),
    );
    // 11 bytes: 'abc' (7) and '' (4); the 4 trailing bytes are reported.
    expect(invalid(body, header)).toContain('unexpected additional input data: 4 bytes');
    const ok = withBinary(
      { inputs: [{ ...binaryInput('S', 'BYTES', [2], 11), parameters: { binary_data_size: 11, keep: 'me' } }] },
      le.bytes('abc', ''),
    );
    expect(decode(ok.body, ok.header).inputs[0]).toEqual({
      name: 'S',
      datatype: 'BYTES',
      shape: [2],
      data: [Buffer.from('abc'), new Uint8Array(0)].map((b) => new Uint8Array(b)),
      parameters: { keep: 'me' },
    });
  });

  it('decodes binary data that starts at an odd offset', () => {
    const json = { inputs: [binaryInput('F', 'FP64', [2], 16)], id: 'x' };
    for (const id of ['x', 'xy', 'xyz', 'wxyz']) {
      const { body, header } = withBinary({ ...json, id }, Buffer.from(new Float64Array([0.1, -2.5e300]).buffer));
      const data = decode(body, header).inputs[0]?.data as Float64Array;
      expect(data).toEqual(new Float64Array([0.1, -2.5e300]));
      expect(data.byteOffset % 8).toBe(0);
    }
  });

  it('accepts a header equal to the body length (nothing binary) and binary_data_size 0 anywhere', () => {
    const json = { inputs: [{ name: 'X', datatype: 'INT8', shape: [1], data: [3] }] };
    const text = Buffer.from(JSON.stringify(json));
    expect(decode(text, String(text.byteLength))).toEqual(parseInferRequest(json));
    const empty = Buffer.from(JSON.stringify({ inputs: [binaryInput('E', 'FP32', [0, 4], 0)] }));
    const expected = { inputs: [{ name: 'E', datatype: 'FP32', shape: [0, 4], data: new Float32Array(0) }] };
    expect(decode(empty)).toEqual(expected);
    expect(decode(empty, String(empty.byteLength))).toEqual(expected);
  });

  it('tolerates whitespace around the header value', () => {
    const { body, header } = withBinary({ inputs: [binaryInput('X', 'INT32', [1], 4)] }, le.i32(9));
    expect(decode(body, ` ${header} `).inputs[0]?.data).toEqual(new Int32Array([9]));
  });

  it('applies maxElements to binary inputs before reading them', () => {
    const { body, header } = withBinary({ inputs: [binaryInput('X', 'UINT8', [5, 5], 25)] }, new Uint8Array(25));
    expect(invalid(body, header, { maxElements: 10 })).toBe("input 'X': shape [5,5] has too many elements (limit 10)");
  });
});

describe('decodeHttpInferRequest: round trips', () => {
  it('decodes what encodeHttpInferRequest wrote, for any mix of JSON and binary inputs', () => {
    fc.assert(
      fc.property(mixedRequestArb, ({ req, binary }) => {
        const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(req, { binaryInputs: binary });
        expect(inferenceHeaderContentLength === undefined).toBe(binary.size === 0);
        expect(decode(body, inferenceHeaderContentLength?.toString())).toEqual(req);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a JSON-representable tensor identically whether it came as JSON or binary', () => {
    fc.assert(
      fc.property(mixedRequestArb, ({ req }) => {
        const carried = req.inputs.filter((t) => jsonCarries(t, 'request'));
        if (carried.length === 0) return;
        const sub = { inputs: carried };
        const asJson = encodeHttpInferRequest(sub, { binaryInputs: false });
        const asBinary = encodeHttpInferRequest(sub, { binaryInputs: true });
        expect(asJson.inferenceHeaderContentLength).toBeUndefined();
        expect(decode(asBinary.body, String(asBinary.inferenceHeaderContentLength))).toEqual(decode(asJson.body));
      }),
    );
  });

  it('refuses every truncation and every extension of a binary body', () => {
    fc.assert(
      fc.property(mixedRequestArb, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 5 }), ({ req }, cut, extra) => {
        const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(req, { binaryInputs: true });
        const header = String(inferenceHeaderContentLength);
        invalid(body.subarray(0, cut % body.byteLength), header);
        invalid(Buffer.concat([body, extra]), header);
      }),
    );
  });

  it('answers any corrupted byte with a result or an INVALID_ARGUMENT, never a crash', () => {
    fc.assert(
      fc.property(mixedRequestArb, fc.nat(), fc.integer({ min: 1, max: 255 }), ({ req, binary }, at, flip) => {
        const { body, inferenceHeaderContentLength } = encodeHttpInferRequest(req, { binaryInputs: binary });
        const corrupt = Buffer.from(body);
        const i = at % corrupt.byteLength;
        corrupt[i] = (corrupt[i] as number) ^ flip;
        try {
          decode(corrupt, inferenceHeaderContentLength?.toString());
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe('INVALID_ARGUMENT');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('decodeHttpInferRequest: malformed requests', () => {
  const good = withBinary({ inputs: [binaryInput('X', 'INT32', [2], 8)] }, le.i32(1, 2));

  it('refuses header values that are not a byte count', () => {
    for (const value of ['abc', '-1', '1.5', '', '0x10', '1e2', '12 34', '+5']) {
      expect(invalid(good.body, value)).toMatch(/^Inference-Header-Content-Length must be a non-negative integer/);
    }
  });

  it('refuses a header larger than the body', () => {
    expect(invalid(good.body, String(good.body.byteLength + 1))).toBe(
      `Inference-Header-Content-Length ${good.body.byteLength + 1} is larger than the request body (${good.body.byteLength} bytes)`,
    );
    expect(invalid(good.body, '99999999999999999999')).toBe(
      `Inference-Header-Content-Length 99999999999999999999 is larger than the request body (${good.body.byteLength} bytes)`,
    );
  });

  it('refuses a header that cuts the JSON or swallows binary bytes', () => {
    const n = Number(good.header);
    expect(invalid(good.body, String(n - 1))).toMatch(
      /^infer request JSON \(the first \d+ bytes of the body, per Inference-Header-Content-Length\) is not valid JSON: .*must be the exact byte length of the JSON part$/,
    );
    expect(invalid(good.body, String(n + 2))).toContain('is not valid JSON');
  });

  it('refuses a header that ends inside a UTF-8 character', () => {
    const { body, header } = withBinary({ id: 'é', inputs: [binaryInput('X', 'INT32', [1], 4)] }, le.i32(1));
    const inside = body.indexOf(Buffer.from('é')) + 1;
    expect(invalid(body, String(inside))).toContain(
      'is not valid UTF-8; does Inference-Header-Content-Length cut a character',
    );
    expect(Number(header)).toBeGreaterThan(inside);
  });

  it('refuses a body without the header that is not JSON', () => {
    expect(invalid(Buffer.from('{"inputs":'))).toMatch(/^infer request body is not valid JSON: /);
    expect(invalid(Uint8Array.from([0x7b, 0xff, 0x7d]))).toBe('infer request body is not valid UTF-8');
  });

  it('refuses binary_data_size too big for the body (truncated body)', () => {
    const { body, header } = withBinary(
      { inputs: [binaryInput('A', 'FP32', [1], 4), binaryInput('B', 'BYTES', [1], 20)] },
      le.f32(1),
      le.bytes('hello'),
    );
    expect(invalid(body, header)).toBe(
      "input 'B': 'binary_data_size' is 20 but only 9 bytes of binary data remain (body truncated, or 'binary_data_size' too big)",
    );
    expect(invalid(good.body.subarray(0, good.body.byteLength - 1), good.header)).toContain(
      "input 'X': 'binary_data_size' is 8 but only 7 bytes of binary data remain",
    );
  });

  it('refuses binary_data_size that disagrees with the shape', () => {
    for (const size of [4, 12]) {
      const { body, header } = withBinary({ inputs: [binaryInput('X', 'INT32', [2], size)] }, le.i32(1, 2));
      expect(invalid(body, header)).toBe(
        `input 'X': 'binary_data_size' is ${size} but shape [2] of INT32 needs 8 bytes`,
      );
    }
  });

  it('refuses binary_data_size too small for BYTES (leftover bytes or a cut element)', () => {
    const two = le.bytes('ab', 'cd');
    const cut = withBinary({ inputs: [binaryInput('S', 'BYTES', [2], 10)] }, two);
    expect(invalid(cut.body, cut.header)).toBe(
      "input 'S': BYTES element 1: length prefix says 2 bytes but only 0 remain",
    );
    const leftover = withBinary({ inputs: [binaryInput('S', 'BYTES', [1], 6)] }, two);
    expect(invalid(leftover.body, leftover.header)).toBe(
      "unexpected additional input data: 6 bytes after the binary data of input 'S', the last binary input ('binary_data_size' too small, or trailing bytes)",
    );
  });

  it('refuses binary_data_size that is not a non-negative integer', () => {
    for (const [size, shown] of [
      [1.5, '1.5'],
      ['8', '"8"'],
      [-8, '-8'],
      [null, 'null'],
      [true, 'true'],
    ] as const) {
      const { body, header } = withBinary({ inputs: [binaryInput('X', 'INT32', [2], size)] }, le.i32(1, 2));
      expect(invalid(body, header)).toBe(
        `input 'X': 'binary_data_size' must be a non-negative integer byte count, got ${shown}`,
      );
    }
  });

  it('refuses binary_data_size on a tensor that also has data', () => {
    const { body, header } = withBinary(
      { inputs: [binaryInput('X', 'INT32', [2], 8, { data: [1, 2] })] },
      le.i32(1, 2),
    );
    expect(invalid(body, header)).toBe(
      "input 'X': set only one of 'data' and 'binary_data_size' in 'parameters', not both",
    );
  });

  it('refuses binary_data_size when the body has no binary part', () => {
    const body = Buffer.from(JSON.stringify({ inputs: [binaryInput('X', 'INT32', [2], 8)] }));
    expect(invalid(body)).toBe(
      "input 'X': 'binary_data_size' is 8 but the body has no binary data: send Inference-Header-Content-Length with the byte length of the JSON part",
    );
  });

  it('refuses trailing bytes after the binary data, or binary data no input claims', () => {
    expect(invalid(Buffer.concat([good.body, Buffer.from([0])]), good.header)).toContain(
      "unexpected additional input data: 1 bytes after the binary data of input 'X'",
    );
    const json = withBinary({ inputs: [{ name: 'J', datatype: 'INT32', shape: [1], data: [1] }] }, le.i32(5));
    expect(invalid(json.body, json.header)).toBe(
      "unexpected additional input data: 4 bytes after the JSON part, but no input has 'binary_data_size' (is Inference-Header-Content-Length too small?)",
    );
  });

  it('refuses bad BYTES length prefixes', () => {
    const { body, header } = withBinary({ inputs: [binaryInput('S', 'BYTES', [1], 6)] }, le.u32(7), Buffer.from('ab'));
    expect(invalid(body, header)).toBe("input 'S': BYTES element 0: length prefix says 7 bytes but only 2 remain");
    const short = withBinary({ inputs: [binaryInput('S', 'BYTES', [2], 6)] }, le.u32(0), Buffer.from('ab'));
    expect(invalid(short.body, short.header)).toContain('2 BYTES elements need at least 8 bytes');
  });

  it('refuses unknown datatypes on binary and JSON inputs', () => {
    const { body, header } = withBinary(
      { inputs: [{ name: 'J', datatype: 'INT32', shape: [1], data: [1] }, binaryInput('X', 'FLOAT32', [1], 4)] },
      le.f32(1),
    );
    expect(invalid(body, header)).toMatch(/^input 'X': unknown datatype 'FLOAT32' \(expected one of BOOL, /);
    const json = withBinary(
      { inputs: [{ name: 'J', datatype: 'fp32', shape: [1], data: [1] }, binaryInput('X', 'FP32', [1], 4)] },
      le.f32(1),
    );
    expect(invalid(json.body, json.header)).toMatch(/^input 'J': unknown datatype 'fp32'/);
  });

  it('refuses bad shapes and JSON data that does not fill the shape', () => {
    const negative = withBinary({ inputs: [binaryInput('X', 'INT32', [-1, 2], 8)] }, le.i32(1, 2));
    expect(invalid(negative.body, negative.header)).toBe(
      "input 'X': invalid shape [-1,2]: dimensions must be non-negative integers",
    );
    const mismatch = withBinary(
      { inputs: [{ name: 'J', datatype: 'INT32', shape: [3], data: [1, 2] }, binaryInput('X', 'INT32', [1], 4)] },
      le.i32(1),
    );
    expect(invalid(mismatch.body, mismatch.header)).toBe("input 'J': expected 3 elements (shape [3]), got 2");
  });

  it('refuses BF16 as JSON but accepts it binary', () => {
    const json = withBinary(
      { inputs: [{ name: 'J', datatype: 'BF16', shape: [1], data: [1] }, binaryInput('X', 'BF16', [1], 2)] },
      Buffer.from([0x80, 0x3f]),
    );
    expect(invalid(json.body, json.header)).toContain(
      "input 'J': BF16 tensors must use the binary tensor data extension",
    );
    const ok = withBinary({ inputs: [binaryInput('X', 'BF16', [1], 2)] }, Buffer.from([0x80, 0x3f]));
    expect(decode(ok.body, ok.header).inputs[0]?.data).toEqual(new Uint16Array([0x3f80]));
  });

  it('refuses BOOL bytes other than 0/1', () => {
    const { body, header } = withBinary({ inputs: [binaryInput('B', 'BOOL', [2], 2)] }, Buffer.from([1, 2]));
    expect(invalid(body, header)).toBe("input 'B': BOOL element 1 is byte 2; binary BOOL elements must be 0 or 1");
  });

  it('refuses duplicate input names and malformed structure in binary requests', () => {
    const dup = withBinary(
      { inputs: [binaryInput('X', 'INT8', [1], 1), binaryInput('X', 'INT8', [1], 1)] },
      Buffer.from([1, 2]),
    );
    expect(invalid(dup.body, dup.header)).toBe("duplicate input name 'X'");
    const noInputs = withBinary({ inputs: [] }, Buffer.from([1]));
    expect(invalid(noInputs.body, noInputs.header)).toBe("infer request must have a non-empty 'inputs' array");
    const array = withBinary([1], Buffer.from([1]));
    expect(invalid(array.body, array.header)).toBe('infer request must be a JSON object');
    const badShape = withBinary({ inputs: [{ ...binaryInput('X', 'INT8', [1], 1), shape: 'x' }] }, Buffer.from([1]));
    expect(invalid(badShape.body, badShape.header)).toMatch(/^input 'X': 'shape': /);
  });
});
