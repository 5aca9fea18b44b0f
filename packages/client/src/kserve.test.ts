import { describe, expect, it } from 'vitest';
import {
  decodeKserveResponse,
  floatToHalfBits,
  halfBitsToFloat,
  type KserveData,
  type KserveDatatype,
  type KserveRequest,
  kserveRequest,
  type TensorInput,
  tensorStrings,
} from './kserve.ts';

const utf8 = new TextEncoder();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A server that answers each input as an output of the same name, in the request's form (JSON stays JSON). */
function echo(req: KserveRequest): { body: Uint8Array; headerLength: string | undefined } {
  const headerLength = req.headers['inference-header-content-length'];
  const jsonLength = headerLength === undefined ? req.body.byteLength : Number(headerLength);
  // Rewritten as text, not parsed, so INT64 digits beyond 2^53 survive as they would from a real server.
  const head = `{"model_name":"echo","model_version":"1",${text(req.body.subarray(1, jsonLength)).replace('"inputs":', '"outputs":')}`;
  const json = utf8.encode(head);
  const body = new Uint8Array(json.byteLength + req.body.byteLength - jsonLength);
  body.set(json);
  body.set(req.body.subarray(jsonLength), json.byteLength);
  return { body, headerLength: headerLength === undefined ? undefined : String(json.byteLength) };
}

function roundTrip(inputs: TensorInput[], binary: boolean) {
  const { body, headerLength } = echo(kserveRequest(inputs, { binary }));
  return decodeKserveResponse(body, headerLength).outputs;
}

/** One sample per datatype, with the extremes each can hold. */
const SAMPLES: [KserveDatatype, KserveData][] = [
  ['BOOL', new Uint8Array([1, 0, 1])],
  ['UINT8', new Uint8Array([0, 255, 7])],
  ['UINT16', new Uint16Array([0, 65535])],
  ['UINT32', new Uint32Array([0, 2 ** 32 - 1])],
  ['UINT64', new BigUint64Array([0n, 2n ** 64n - 1n, 2n ** 53n + 1n])],
  ['INT8', new Int8Array([-128, 127])],
  ['INT16', new Int16Array([-32768, 32767])],
  ['INT32', new Int32Array([-(2 ** 31), 2 ** 31 - 1, 0])],
  ['INT64', new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n])],
  ['FP16', new Uint16Array([0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000])],
  ['FP32', new Float32Array([0.1, -1.5, 3.4e38, 1e-45])],
  ['FP64', new Float64Array([Math.PI, -1e-300, Number.MAX_VALUE])],
  ['BYTES', [utf8.encode('hello'), utf8.encode('a\0b'), new Uint8Array(0)]],
];

describe('kserveRequest + decodeKserveResponse round trips', () => {
  for (const binary of [false, true]) {
    const form = binary ? 'binary' : 'JSON';
    it.each(SAMPLES)(`${form}: %s keeps every value and its storage`, (datatype, data) => {
      const out = roundTrip([{ name: 'X', datatype, shape: [1, data.length], data }], binary).get('X');
      expect(out?.datatype).toBe(datatype);
      expect(out?.shape).toEqual([1, data.length]);
      expect(out?.data).toEqual(data);
      expect(out?.data.constructor).toBe(data.constructor);
    });

    it(`${form}: empty tensors of every datatype`, () => {
      const inputs = SAMPLES.map(([datatype, data], i) => ({
        name: `E${i}`,
        datatype,
        shape: [2, 0],
        data: Array.isArray(data) ? [] : data.slice(0, 0),
      }));
      const outputs = roundTrip(inputs, binary);
      for (const input of inputs) {
        expect(outputs.get(input.name)).toMatchObject({ datatype: input.datatype, shape: [2, 0], data: input.data });
      }
    });

    it(`${form}: plain values are converted to their datatype's storage`, () => {
      const outputs = roundTrip(
        [
          { name: 'b', data: [true, false] },
          { name: 's', data: ['ünï', 'x'] },
          { name: 'n', data: [1, -2], datatype: 'INT16' },
          { name: 'big', data: [2n ** 60n] },
          { name: 'h', data: [1, 0.5], datatype: 'FP16' },
          { name: 'u', data: [2, 3], datatype: 'UINT64' },
        ],
        binary,
      );
      expect(outputs.get('b')?.data).toEqual(new Uint8Array([1, 0]));
      expect(tensorStrings(must(outputs.get('s')))).toEqual(['ünï', 'x']);
      expect(outputs.get('n')?.data).toEqual(new Int16Array([1, -2]));
      expect(outputs.get('big')).toMatchObject({ datatype: 'INT64', data: new BigInt64Array([2n ** 60n]) });
      expect(outputs.get('h')?.data).toEqual(new Uint16Array([0x3c00, 0x3800]));
      expect(outputs.get('u')?.data).toEqual(new BigUint64Array([2n, 3n]));
    });
  }

  it('binary: carries what JSON cannot (NUL and non-UTF-8 bytes, NaN and ±Infinity, BF16)', () => {
    const bytes = [new Uint8Array([0, 0xff, 0xfe, 0]), utf8.encode('\0')];
    const floats = new Float32Array([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    const halves = new Uint16Array([0x7e00, 0x7c00, 0xfc00]);
    const bf16 = new Uint16Array([0x3f80, 0xffff]);
    const outputs = roundTrip(
      [
        { name: 'bytes', data: bytes },
        { name: 'f', data: floats },
        { name: 'h', data: halves, datatype: 'FP16' },
        { name: 'bf', data: bf16, datatype: 'BF16' },
      ],
      true,
    );
    expect(outputs.get('bytes')?.data).toEqual(bytes);
    expect(outputs.get('f')?.data).toEqual(floats);
    expect(outputs.get('h')?.data).toEqual(halves);
    expect(outputs.get('bf')?.data).toEqual(bf16);
  });

  it('random tensors of every datatype and shape survive both forms (seeded)', () => {
    const random = mulberry32(20240611);
    const int = (n: number) => Math.floor(random() * n);
    for (let round = 0; round < 200; round++) {
      const [datatype] = SAMPLES[int(SAMPLES.length)] as [KserveDatatype, KserveData];
      const shape = Array.from({ length: 1 + int(3) }, () => int(4));
      const count = shape.reduce((a, d) => a * d, 1);
      const data = randomData(datatype, count, random);
      for (const binary of [false, true]) {
        const out = roundTrip([{ name: 'R', datatype, shape, data }], binary).get('R');
        expect(out?.shape).toEqual(shape);
        expect(out?.data).toEqual(data);
      }
    }
  });
});

describe('kserveRequest wire format', () => {
  it('JSON: the Open Inference Protocol body, with datatype and shape inferred', () => {
    const req = kserveRequest([{ name: 'INPUT0', data: new Int32Array([1, 2]) }], {
      id: 'r1',
      parameters: { priority: 1 },
    });
    expect(req.contentType).toBe('application/json');
    expect(req.headers).toEqual({ 'content-type': 'application/json' });
    expect(JSON.parse(text(req.body))).toEqual({
      id: 'r1',
      parameters: { priority: 1 },
      inputs: [{ name: 'INPUT0', shape: [2], datatype: 'INT32', data: [1, 2] }],
    });
  });

  it('JSON: INT64 beyond 2^53 keeps its digits, BOOL is true/false, FP16 its value', () => {
    const req = kserveRequest([
      { name: 'i', data: new BigInt64Array([9007199254740993n]) },
      { name: 'b', data: new Uint8Array([1, 0]), datatype: 'BOOL' },
      { name: 'h', data: new Uint16Array([0x3e00]), datatype: 'FP16' },
    ]);
    const body = text(req.body);
    expect(body).toContain('"data":[9007199254740993]');
    expect(body).toContain('"data":[true,false]');
    expect(body).toContain('"datatype":"FP16","data":[1.5]');
  });

  it('binary: JSON header, then each tensor little-endian; BYTES as uint32 length + bytes; BOOL one byte', () => {
    const req = kserveRequest(
      [
        { name: 'a', data: new Int32Array([1, -2]) },
        { name: 's', data: ['a\0b', ''] },
        { name: 'b', data: [true, false] },
        { name: 'h', data: new Uint16Array([0x3c00]), datatype: 'FP16' },
      ],
      { binary: true },
    );
    const headerLength = Number(req.headers['inference-header-content-length']);
    expect(req.contentType).toBe('application/octet-stream');
    expect(req.headers['content-type']).toBe('application/octet-stream');
    const header = JSON.parse(text(req.body.subarray(0, headerLength)));
    expect(header.inputs).toEqual([
      { name: 'a', shape: [2], datatype: 'INT32', parameters: { binary_data_size: 8 } },
      { name: 's', shape: [2], datatype: 'BYTES', parameters: { binary_data_size: 11 } },
      { name: 'b', shape: [2], datatype: 'BOOL', parameters: { binary_data_size: 2 } },
      { name: 'h', shape: [1], datatype: 'FP16', parameters: { binary_data_size: 2 } },
    ]);
    expect(header.parameters).toEqual({ binary_data_output: true });
    expect([...req.body.subarray(headerLength)]).toEqual([
      ...[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff],
      ...[3, 0, 0, 0, 0x61, 0, 0x62, 0, 0, 0, 0],
      ...[1, 0],
      ...[0x00, 0x3c],
    ]);
  });

  it('outputs: named, binary per output when asked, or JSON; request-level binary_data_output otherwise', () => {
    const input = [{ name: 'x', data: new Float32Array(1) }];
    const named = kserveRequest(input, { outputs: ['A', { name: 'B', parameters: { classification: 2 } }] });
    expect(JSON.parse(text(named.body)).outputs).toEqual([
      { name: 'A', parameters: { binary_data: false } },
      { name: 'B', parameters: { binary_data: false, classification: 2 } },
    ]);
    const binaryOut = kserveRequest(input, { outputs: ['A'], binaryOutputs: true });
    expect(JSON.parse(text(binaryOut.body))).toMatchObject({
      outputs: [{ name: 'A', parameters: { binary_data: true } }],
    });
    expect(binaryOut.contentType).toBe('application/json');
    const all = kserveRequest(input, { binaryOutputs: true, parameters: { p: 1 } });
    expect(JSON.parse(text(all.body)).parameters).toEqual({ p: 1, binary_data_output: true });
    const jsonOut = kserveRequest(input, { binary: true, binaryOutputs: false });
    expect(
      JSON.parse(text(jsonOut.body.subarray(0, Number(jsonOut.headers['inference-header-content-length'])))),
    ).not.toHaveProperty('parameters');
  });

  it('refuses what it cannot send, saying why', () => {
    expect(() => kserveRequest([{ name: 'x', data: new Int32Array(3), shape: [2, 2] }])).toThrow(RangeError);
    expect(() => kserveRequest([{ name: 'x', data: new Int32Array(1), datatype: 'FP32' }])).toThrow(/Float32Array/);
    expect(() => kserveRequest([{ name: 'x', data: [1, 2] }])).toThrow(/give its datatype/);
    expect(() => kserveRequest([{ name: 'x', data: [] }])).toThrow(/give its datatype/);
    expect(() => kserveRequest([{ name: 'x', data: new Float32Array([Number.NaN]) }])).toThrow(/binary: true/);
    expect(() => kserveRequest([{ name: 'x', data: [new Uint8Array([0xff])] }])).toThrow(/not UTF-8/);
    expect(() => kserveRequest([{ name: 'x', data: new Uint16Array(1), datatype: 'BF16' }])).toThrow(/BF16/);
    expect(() => kserveRequest([{ name: 'x', data: [1.5], datatype: 'INT64' }])).toThrow(/integer/);
    expect(() => kserveRequest([{ name: '', data: new Int8Array(1) }])).toThrow(/name/);
  });
});

describe('decodeKserveResponse', () => {
  it('reads a server JSON answer: nested data, non-finite strings, INT64 beyond 2^53, parameters', () => {
    const body = utf8.encode(
      '{"model_name":"m","model_version":"2","id":"r","parameters":{"sequence_id":3},"outputs":[' +
        '{"name":"f","datatype":"FP32","shape":[2,2],"data":[[1,"NaN"],["Infinity","-Infinity"]]},' +
        '{"name":"i","datatype":"INT64","shape":[1],"data":[-9007199254740993]},' +
        '{"name":"c","datatype":"BYTES","shape":[1],"parameters":{"classification":1},"data":["0.5:1"]}]}\n',
    );
    const res = decodeKserveResponse(body);
    expect(res).toMatchObject({ modelName: 'm', modelVersion: '2', id: 'r', parameters: { sequence_id: 3 } });
    expect(res.outputs.get('f')?.data).toEqual(new Float32Array([1, Number.NaN, Infinity, -Infinity]));
    expect(res.outputs.get('i')?.data).toEqual(new BigInt64Array([-9007199254740993n]));
    expect(res.outputs.get('c')?.parameters).toEqual({ classification: 1 });
    expect([...res.outputs.keys()]).toEqual(['f', 'i', 'c']);
  });

  it('binary without the header length (an answer read from a result zip): the JSON ends where its object does', () => {
    const req = kserveRequest(
      [
        { name: 'x', data: ['}"{', 'ü'] },
        { name: 'y', data: new Int32Array([7]) },
      ],
      {
        binary: true,
      },
    );
    const { body } = echo(req);
    const outputs = decodeKserveResponse(body).outputs;
    expect(tensorStrings(must(outputs.get('x')))).toEqual(['}"{', 'ü']);
    expect(outputs.get('y')?.data).toEqual(new Int32Array([7]));
    expect(outputs.get('y')?.parameters).toBeUndefined();
  });

  it('says what is wrong with a malformed answer', () => {
    const { body, headerLength } = echo(kserveRequest([{ name: 'x', data: new Int32Array(2) }], { binary: true }));
    const n = Number(headerLength);
    expect(() => decodeKserveResponse(body.subarray(0, body.byteLength - 1), n)).toThrow(/overruns/);
    const longer = new Uint8Array(body.byteLength + 1);
    longer.set(body);
    expect(() => decodeKserveResponse(longer, n)).toThrow(/after the last binary output/);
    expect(() => decodeKserveResponse(body, body.byteLength + 1)).toThrow(/Inference-Header-Content-Length/);
    expect(() => decodeKserveResponse(body, n - 1)).toThrow(/does not parse/);
    expect(() => decodeKserveResponse(utf8.encode('{"error":"boom"}'))).toThrow(/model_name/);
    const cut = echo(kserveRequest([{ name: 's', data: ['abc'] }], { binary: true }));
    const bad = cut.body.slice();
    bad[Number(cut.headerLength)] = 9; // the element claims 9 bytes; 3 follow
    expect(() => decodeKserveResponse(bad, cut.headerLength)).toThrow(/cut short/);
    const wrongCount = utf8.encode(
      '{"model_name":"m","outputs":[{"name":"o","datatype":"INT8","shape":[3],"data":[1]}]}',
    );
    expect(() => decodeKserveResponse(wrongCount)).toThrow(/holds 1 elements/);
    const unknown = utf8.encode('{"model_name":"m","outputs":[{"name":"o","datatype":"INT4","shape":[0],"data":[]}]}');
    expect(() => decodeKserveResponse(unknown)).toThrow(/unknown datatype INT4/);
  });
});

describe('FP16 bits', () => {
  it('every finite and infinite half survives halfBitsToFloat → floatToHalfBits', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      if ((bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0) continue; // NaN payloads: canonical 0x7e00
      expect(floatToHalfBits(halfBitsToFloat(bits))).toBe(bits);
    }
    expect(floatToHalfBits(Number.NaN)).toBe(0x7e00);
  });

  it('rounds to nearest, ties to even, and overflows to Infinity from 65520', () => {
    expect(floatToHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    expect(floatToHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(floatToHalfBits(2 ** -25)).toBe(0);
    expect(floatToHalfBits(65519)).toBe(0x7bff);
    expect(floatToHalfBits(65520)).toBe(0x7c00);
    expect(floatToHalfBits(-1e9)).toBe(0xfc00);
  });
});

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values JSON can carry too: finite floats, UTF-8 strings (NUL included). */
function randomData(datatype: KserveDatatype, count: number, random: () => number): KserveData {
  const u32 = () => BigInt(Math.floor(random() * 2 ** 32));
  const bits64 = () => u32() | (u32() << 32n);
  const bytes = () => new Uint8Array(Array.from({ length: 8 }, () => Math.floor(random() * 256)));
  switch (datatype) {
    case 'BYTES':
      return Array.from({ length: count }, () => utf8.encode(`s\0${Math.floor(random() * 1e6)}ü`));
    case 'BOOL':
      return Uint8Array.from({ length: count }, () => (random() < 0.5 ? 1 : 0));
    case 'FP16':
      // Finite halves only: with bit 10 clear the exponent field is never 0x1f.
      return Uint16Array.from({ length: count }, () => Math.floor(random() * 0x10000) & 0xfbff);
    case 'FP32':
      return Float32Array.from({ length: count }, () => (random() - 0.5) * 10 ** Math.floor(random() * 60 - 30));
    case 'FP64':
      return Float64Array.from({ length: count }, () => (random() - 0.5) * 10 ** Math.floor(random() * 600 - 300));
    case 'INT64':
      return BigInt64Array.from({ length: count }, () => BigInt.asIntN(64, bits64()));
    case 'UINT64':
      return BigUint64Array.from({ length: count }, bits64);
    default: {
      // Any bit pattern is a valid value of the other integer types.
      const sizes = { UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, UINT32: 4, INT32: 4 } as const;
      const size = sizes[datatype as keyof typeof sizes];
      const raw = new Uint8Array(count * size);
      for (let i = 0; i < raw.length; i += 8) raw.set(bytes().subarray(0, Math.min(8, raw.length - i)), i);
      const ctors = {
        UINT8: Uint8Array,
        INT8: Int8Array,
        UINT16: Uint16Array,
        INT16: Int16Array,
        UINT32: Uint32Array,
        INT32: Int32Array,
      };
      return new ctors[datatype as keyof typeof ctors](raw.buffer, 0, count);
    }
  }
}
