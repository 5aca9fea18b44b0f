/**
 * KServe V2 (Open Inference Protocol REST) requests and responses from typed arrays, in both HTTP forms: JSON, and
 * Triton's binary tensor data extension (the JSON header, then each binary tensor's bytes, little-endian, row-major;
 * the header's byte length in `Inference-Header-Content-Length`). Browser-safe: Uint8Array, DataView and
 * TextEncoder only, and no server package, so the SDK carries its own small codec.
 */

import type { InvokeOptions } from './invoke.ts';

/** The datatypes this codec carries. BF16 travels only as binary (it has no JSON form). */
export const KSERVE_DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'BF16',
  'FP32',
  'FP64',
  'BYTES',
] as const;
export type KserveDatatype = (typeof KSERVE_DATATYPES)[number];

/** `NvcfClient.infer`'s options: how to build the request, and how to invoke (its content type is the request's). */
export type InferOptions = KserveRequestOptions & Omit<InvokeOptions, 'contentType'>;

/** `NvcfClient.infer`'s answer: the decoded response and the NVCF request id. */
export type InferResult = KserveResponse & { requestId: string };

type NumericDatatype = Exclude<KserveDatatype, 'BYTES'>;
type NumericData =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array;

/**
 * A tensor's elements as this SDK holds them: BOOL a Uint8Array of 0/1; FP16 and BF16 a Uint16Array of raw bit
 * patterns (see floatToHalfBits); INT64/UINT64 a BigInt64Array/BigUint64Array; BYTES one Uint8Array per element.
 */
export type KserveData = NumericData | Uint8Array[];

/** An input tensor. `datatype` is inferred from a typed array, `boolean[]` (BOOL), `string[]` or `bigint[]`. */
export interface TensorInput {
  name: string;
  /** KserveData, or plain values: booleans (BOOL), strings (BYTES), numbers/bigints (with `datatype`). */
  data: KserveData | boolean[] | (string | Uint8Array)[] | number[] | bigint[];
  /** Default: one dimension, the element count. */
  shape?: number[];
  datatype?: KserveDatatype;
  parameters?: Record<string, unknown>;
}

/** An output asked for by name, with its own parameters (e.g. `{ classification: 3 }`). */
export interface RequestedOutput {
  name: string;
  parameters?: Record<string, unknown>;
}

export interface KserveRequestOptions {
  /** Send the inputs in the binary extension (default false: all JSON). Needed for NaN/±Infinity and BF16. */
  binary?: boolean;
  /** The outputs to return (default every output). */
  outputs?: (string | RequestedOutput)[];
  /** Ask for binary outputs (default: as `binary`): exact floats, any bytes in BYTES, less parsing. */
  binaryOutputs?: boolean;
  /** The request's `id`, echoed in the response. */
  id?: string;
  /** Request-level `parameters`. */
  parameters?: Record<string, unknown>;
}

/** A request body ready to send, with the headers that go with it (`content-type` included). */
export interface KserveRequest {
  body: Uint8Array;
  contentType: 'application/json' | 'application/octet-stream';
  headers: Record<string, string>;
}

/** A decoded output tensor. */
export interface KserveTensor {
  name: string;
  datatype: KserveDatatype;
  shape: number[];
  data: KserveData;
  /** Its parameters, less the binary extension's `binary_data_size`. */
  parameters?: Record<string, unknown>;
}

export interface KserveResponse {
  modelName: string;
  modelVersion?: string;
  id?: string;
  parameters?: Record<string, unknown>;
  /** By name, in the response's order. */
  outputs: Map<string, KserveTensor>;
}

type Storage = {
  readonly BYTES_PER_ELEMENT: number;
  new (length: number): NumericData;
  new (buffer: ArrayBufferLike, offset: number, length: number): NumericData;
};
const STORAGE: Readonly<Record<NumericDatatype, Storage>> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  BF16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
};
/** Inference order: the first storage a typed array is an instance of names its datatype. */
const INFERRED: readonly NumericDatatype[] = [
  'UINT8',
  'INT8',
  'UINT16',
  'INT16',
  'UINT32',
  'INT32',
  'UINT64',
  'INT64',
  'FP32',
  'FP64',
];
const NON_FINITE = new Map<unknown, number>([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
]);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const isInt64 = (datatype: unknown) => datatype === 'INT64' || datatype === 'UINT64';

/**
 * Builds a KServe V2 infer request from typed arrays: JSON by default, the binary extension with `binary: true`.
 *
 * @throws TypeError for data that does not fit its datatype (or JSON that cannot carry it); RangeError for a shape
 *   whose element count is not the data's.
 * @example
 * const req = kserveRequest([{ name: 'INPUT0', shape: [1, 16], data: new Int32Array(16) }], { binary: true });
 * await fetch(`${url}/v2/models/simple/infer`, { method: 'POST', headers: req.headers, body: req.body });
 */
export function kserveRequest(inputs: TensorInput[], opts: KserveRequestOptions = {}): KserveRequest {
  const binary = opts.binary ?? false;
  const binaryOutputs = opts.binaryOutputs ?? binary;
  const tensors = inputs.map(normalizeInput);
  const blobs = binary ? tensors.map((t) => tensorBytes(t.datatype, t.data)) : [];
  const fields: string[] = [];
  if (opts.id !== undefined) fields.push(`"id":${JSON.stringify(opts.id)}`);
  const parameters =
    binaryOutputs && !opts.outputs ? { ...opts.parameters, binary_data_output: true } : opts.parameters;
  if (parameters) fields.push(`"parameters":${JSON.stringify(parameters)}`);
  const inputJson = tensors.map((t, i) => tensorJson(t, blobs[i]?.byteLength));
  fields.push(`"inputs":[${inputJson.join(',')}]`);
  if (opts.outputs) {
    const outputs = opts.outputs.map((o) => {
      const { name, parameters: p } = typeof o === 'string' ? { name: o, parameters: undefined } : o;
      return { name, parameters: { binary_data: binaryOutputs, ...p } };
    });
    fields.push(`"outputs":${JSON.stringify(outputs)}`);
  }
  const json = encoder.encode(`{${fields.join(',')}}`);
  if (!binary) return { body: json, contentType: 'application/json', headers: { 'content-type': 'application/json' } };
  return {
    body: concat([json, ...blobs]),
    contentType: 'application/octet-stream',
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(json.byteLength),
    },
  };
}

/**
 * Decodes a KServe V2 infer response, JSON or binary extension, into typed arrays (the same storage whichever form
 * it came in: see KserveData). INT64/UINT64 JSON values beyond 2^53 keep their digits where the runtime's JSON.parse
 * gives revivers the source text (Node ≥ 21, current browsers).
 *
 * @param headerLength the response's `Inference-Header-Content-Length`. Absent (e.g. an answer read from a
 *   large-result zip), the JSON part ends where its top-level object closes.
 * @throws TypeError for a body that is not a well-formed response, naming the output at fault.
 * @example
 * const res = await fetch(`${url}/v2/models/simple/infer`, { method: 'POST', headers: req.headers, body: req.body });
 * const out = decodeKserveResponse(new Uint8Array(await res.arrayBuffer()), res.headers.get('inference-header-content-length'));
 * out.outputs.get('OUTPUT0')?.data; // Int32Array
 */
export function decodeKserveResponse(body: Uint8Array, headerLength?: number | string | null): KserveResponse {
  const given =
    headerLength === undefined || headerLength === null || headerLength === '' ? undefined : Number(headerLength);
  if (given !== undefined && !(Number.isInteger(given) && given >= 0 && given <= body.byteLength)) {
    throw new TypeError(
      `invalid KServe response: Inference-Header-Content-Length ${headerLength} for ${body.byteLength} bytes`,
    );
  }
  const jsonLength = given ?? jsonEnd(body);
  const json = parseJson(decoder.decode(body.subarray(0, jsonLength)));
  if (typeof json?.model_name !== 'string' || !Array.isArray(json.outputs)) {
    throw new TypeError('invalid KServe response: expected {model_name, outputs: [...]}');
  }
  let offset = jsonLength;
  const outputs = new Map<string, KserveTensor>();
  for (const raw of json.outputs as RawTensor[]) {
    const label = `output '${String(raw?.name)}'`;
    const datatype = raw?.datatype as KserveDatatype;
    if (typeof raw?.name !== 'string' || !KSERVE_DATATYPES.includes(datatype)) {
      throw new TypeError(`invalid KServe response: ${label} has no name or an unknown datatype ${raw?.datatype}`);
    }
    const count = elementCount(raw.shape, label, TypeError);
    const shape = raw.shape as number[];
    const { binary_data_size: size, ...parameters } = raw.parameters ?? {};
    let data: KserveData;
    if (size === undefined) data = fromJson(datatype, raw.data, count, label);
    else {
      if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || offset + size > body.byteLength) {
        throw new TypeError(`invalid KServe response: ${label} binary_data_size ${size} overruns the body`);
      }
      data = fromBytes(datatype, body.subarray(offset, offset + size), count, label);
      offset += size;
    }
    const tensor: KserveTensor = { name: raw.name, datatype, shape: [...shape], data };
    if (Object.keys(parameters).length > 0) tensor.parameters = parameters;
    outputs.set(raw.name, tensor);
  }
  const rest = body.subarray(offset);
  if (given === undefined ? !/^\s*$/.test(decoder.decode(rest)) : rest.byteLength > 0) {
    throw new TypeError(`invalid KServe response: ${rest.byteLength} bytes after the last binary output`);
  }
  const response: KserveResponse = { modelName: json.model_name, outputs };
  if (typeof json.model_version === 'string') response.modelVersion = json.model_version;
  if (typeof json.id === 'string') response.id = json.id;
  if (json.parameters && typeof json.parameters === 'object') response.parameters = json.parameters;
  return response;
}

/**
 * A BYTES tensor's elements as UTF-8 text.
 *
 * @example
 * tensorStrings(res.outputs.get('OUTPUT0')!); // ['hello', 'world']
 */
export function tensorStrings(tensor: { datatype: KserveDatatype; data: KserveData }): string[] {
  if (tensor.datatype !== 'BYTES') throw new TypeError(`tensorStrings needs a BYTES tensor, got ${tensor.datatype}`);
  return (tensor.data as Uint8Array[]).map((e) => decoder.decode(e));
}

/**
 * A number as the nearest IEEE 754 binary16 bit pattern (ties to even), for FP16 data.
 *
 * @example
 * Uint16Array.from([1, 0.5], floatToHalfBits); // [0x3c00, 0x3800]
 */
export function floatToHalfBits(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const abs = Math.abs(value);
  // 65520 is halfway between the largest half (65504) and 2^16: from there on, ties-to-even gives Infinity.
  if (abs >= 65520) return sign | 0x7c00;
  // Scaling by powers of two is exact, so roundHalfEven is the only rounding (no double rounding via float32).
  if (abs < 2 ** -14) return sign | roundHalfEven(abs * 2 ** 24);
  let e = Math.floor(Math.log2(abs));
  if (2 ** e > abs) e -= 1;
  else if (2 ** (e + 1) <= abs) e += 1;
  // A mantissa rounded up to 2048 carries into the exponent, which is the right encoding.
  return sign | (((e + 15) << 10) + roundHalfEven(abs / 2 ** (e - 10)) - 1024);
}

/** An IEEE 754 binary16 bit pattern's exact value. */
export function halfBitsToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  return diff > 0.5 || (diff === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
}

interface Tensor {
  name: string;
  datatype: KserveDatatype;
  shape: number[];
  data: KserveData;
  parameters: Record<string, unknown> | undefined;
}
interface RawTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
  parameters?: Record<string, unknown>;
}

function normalizeInput(input: TensorInput): Tensor {
  const label = `input '${input.name}'`;
  if (typeof input.name !== 'string' || input.name === '') throw new TypeError('every input needs a name');
  const datatype = input.datatype ?? inferDatatype(input.data, label);
  if (!KSERVE_DATATYPES.includes(datatype)) throw new TypeError(`${label}: unknown datatype ${datatype}`);
  const data = toStorage(datatype, input.data, label);
  const shape = input.shape ?? [data.length];
  if (elementCount(shape, label, RangeError) !== data.length) {
    throw new RangeError(`${label}: shape [${shape.join(',')}] does not hold its ${data.length} elements`);
  }
  return { name: input.name, datatype, shape, data, parameters: input.parameters };
}

function inferDatatype(data: TensorInput['data'], label: string): KserveDatatype {
  if (Array.isArray(data)) {
    const first: unknown = data[0];
    if (typeof first === 'boolean') return 'BOOL';
    if (typeof first === 'string' || first instanceof Uint8Array) return 'BYTES';
    if (typeof first === 'bigint') return 'INT64';
  } else {
    const found = INFERRED.find((d) => data instanceof STORAGE[d]);
    if (found) return found;
  }
  throw new TypeError(`${label}: cannot infer the datatype of this data; give its datatype`);
}

function toStorage(datatype: KserveDatatype, data: TensorInput['data'], label: string): KserveData {
  if (datatype === 'BYTES') {
    if (!Array.isArray(data)) throw new TypeError(`${label}: BYTES data is an array of strings or Uint8Arrays`);
    return data.map((e) => {
      if (typeof e === 'string') return encoder.encode(e);
      if (e instanceof Uint8Array) return e;
      throw new TypeError(`${label}: BYTES elements are strings or Uint8Arrays, got ${typeof e}`);
    });
  }
  const Ctor = STORAGE[datatype];
  if (!Array.isArray(data)) {
    if (data instanceof Ctor) return data;
    throw new TypeError(`${label}: ${datatype} data is a ${Ctor.name}, got ${data.constructor.name}`);
  }
  return fromValues(datatype, data, label);
}

/** Plain values (a request's arrays or a response's JSON data) into their datatype's storage. */
function fromValues(datatype: NumericDatatype, values: readonly unknown[], label: string): NumericData {
  const out = new STORAGE[datatype](values.length);
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (typeof v === 'bigint') out[i] = v;
      else if (typeof v === 'number' && Number.isInteger(v)) out[i] = BigInt(v);
      else throw new TypeError(`${label}: element ${i} is not an integer`);
    }
    return out;
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (datatype === 'BOOL') {
      if (typeof v !== 'boolean' && v !== 0 && v !== 1) throw new TypeError(`${label}: element ${i} is not a boolean`);
      out[i] = v ? 1 : 0;
    } else {
      const n = NON_FINITE.get(v) ?? v;
      if (typeof n !== 'number') throw new TypeError(`${label}: element ${i} is not a number`);
      out[i] = datatype === 'FP16' ? floatToHalfBits(n) : n;
    }
  }
  return out;
}

function elementCount(shape: unknown, label: string, Err: new (message: string) => Error): number {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new Err(`${label}: shape must be an array of non-negative integers`);
  }
  return shape.reduce((a: number, d: number) => a * d, 1);
}

/**
 * One input as JSON text: its `data`, or in the binary form the `binary_data_size` of its bytes. Written by hand so
 * INT64 keeps its digits (JSON.stringify throws on a BigInt).
 */
function tensorJson(t: Tensor, binarySize: number | undefined): string {
  const parameters = binarySize === undefined ? t.parameters : { ...t.parameters, binary_data_size: binarySize };
  let text = `{"name":${JSON.stringify(t.name)},"shape":${JSON.stringify(t.shape)},"datatype":"${t.datatype}"`;
  if (parameters) text += `,"parameters":${JSON.stringify(parameters)}`;
  if (binarySize !== undefined) return `${text}}`;
  return `${text},"data":${jsonValues(t.datatype, t.data, `input '${t.name}'`)}}`;
}

function jsonValues(datatype: KserveDatatype, data: KserveData, label: string): string {
  switch (datatype) {
    case 'BYTES':
      return `[${(data as Uint8Array[]).map((e, i) => JSON.stringify(utf8Text(e, label, i))).join(',')}]`;
    case 'BOOL':
      return `[${Array.from(data as Uint8Array, (v) => (v ? 'true' : 'false')).join(',')}]`;
    case 'BF16':
      throw new TypeError(`${label}: BF16 has no JSON form; send it with binary: true`);
    case 'FP16':
    case 'FP32':
    case 'FP64': {
      const values =
        datatype === 'FP16' ? Array.from(data as Uint16Array, halfBitsToFloat) : Array.from(data as Float32Array);
      if (!values.every(Number.isFinite)) {
        throw new TypeError(`${label}: NaN and ±Infinity have no JSON form; send them with binary: true`);
      }
      // String(x) is JSON's number form; -0 is written as -0 (JSON.stringify would drop its sign).
      return `[${values.map((x) => (Object.is(x, -0) ? '-0' : String(x))).join(',')}]`;
    }
    default:
      // Integers, BigInts included, print their exact digits.
      return `[${(data as NumericData).join(',')}]`;
  }
}

function utf8Text(bytes: Uint8Array, label: string, i: number): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new TypeError(`${label}: element ${i} is not UTF-8, which JSON cannot carry; send it with binary: true`);
  }
}

/** A tensor's bytes in the binary extension: BYTES as (uint32 LE length, bytes) per element; numbers little-endian. */
function tensorBytes(datatype: KserveDatatype, data: KserveData): Uint8Array {
  if (datatype === 'BYTES') {
    const elements = data as Uint8Array[];
    const out = new Uint8Array(elements.reduce((n, e) => n + 4 + e.byteLength, 0));
    const view = new DataView(out.buffer);
    let offset = 0;
    for (const e of elements) {
      view.setUint32(offset, e.byteLength, true);
      out.set(e, offset + 4);
      offset += 4 + e.byteLength;
    }
    return out;
  }
  const typed = data as NumericData;
  const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  return LITTLE_ENDIAN ? bytes : swapBytes(bytes, typed.BYTES_PER_ELEMENT);
}

function fromBytes(datatype: KserveDatatype, bytes: Uint8Array, count: number, label: string): KserveData {
  if (datatype === 'BYTES') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const elements: Uint8Array[] = [];
    for (let offset = 0; offset < bytes.byteLength; ) {
      const length = offset + 4 <= bytes.byteLength ? view.getUint32(offset, true) : -1;
      if (length < 0 || offset + 4 + length > bytes.byteLength) {
        throw new TypeError(`invalid KServe response: ${label} BYTES element ${elements.length} is cut short`);
      }
      elements.push(bytes.slice(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    if (elements.length !== count) {
      throw new TypeError(`invalid KServe response: ${label} holds ${elements.length} elements, its shape ${count}`);
    }
    return elements;
  }
  const Ctor = STORAGE[datatype];
  const size = Ctor.BYTES_PER_ELEMENT;
  if (bytes.byteLength !== count * size) {
    throw new TypeError(`invalid KServe response: ${label} has ${bytes.byteLength} bytes for ${count} elements`);
  }
  // A copy: the body's offsets need not be aligned for the typed array, and the result should not pin the body.
  const own = LITTLE_ENDIAN ? bytes.slice() : swapBytes(bytes, size);
  return new Ctor(own.buffer, 0, count);
}

function fromJson(datatype: KserveDatatype, data: unknown, count: number, label: string): KserveData {
  if (!Array.isArray(data))
    throw new TypeError(`invalid KServe response: ${label} has neither data nor binary_data_size`);
  const values: unknown[] = data.flat(Number.POSITIVE_INFINITY);
  if (values.length !== count) {
    throw new TypeError(`invalid KServe response: ${label} holds ${values.length} elements, its shape ${count}`);
  }
  if (datatype === 'BF16') throw new TypeError(`invalid KServe response: ${label} is BF16 in JSON`);
  if (datatype !== 'BYTES') return fromValues(datatype, values, `invalid KServe response: ${label}`);
  return values.map((v, i) => {
    if (typeof v !== 'string') throw new TypeError(`invalid KServe response: ${label} element ${i} is not a string`);
    return encoder.encode(v);
  });
}

function swapBytes(bytes: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(bytes.byteLength);
  for (let i = 0; i < bytes.byteLength; i += size) {
    for (let j = 0; j < size; j++) out[i + j] = bytes[i + size - 1 - j] as number;
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/** Where the top-level JSON value ends: structural bytes are ASCII, so UTF-8 can be scanned bytewise. */
function jsonEnd(bytes: Uint8Array): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.byteLength; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) depth++;
    else if ((b === 0x7d || b === 0x5d) && --depth === 0) return i + 1;
  }
  return bytes.byteLength;
}

// biome-ignore lint/suspicious/noExplicitAny: the parsed response is checked field by field where it is read.
function parseJson(text: string): any {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TypeError(`invalid KServe response: the JSON part does not parse: ${(err as Error).message}`);
  }
  // The reviver is slower than a plain parse, so it runs only when a 64-bit output lost digits.
  const outputs = (json as { outputs?: unknown })?.outputs;
  const lossy =
    Array.isArray(outputs) &&
    outputs.some((o: RawTensor) => isInt64(o?.datatype) && Array.isArray(o.data) && hasUnsafeInteger(o.data));
  return lossy ? JSON.parse(text, exactIntegers) : json;
}

function hasUnsafeInteger(values: unknown[]): boolean {
  return values.flat(Number.POSITIVE_INFINITY).some((v) => typeof v === 'number' && !Number.isSafeInteger(v));
}

/** Keeps integers beyond 2^53 exact where JSON.parse passes the source text (Node ≥ 21, current browsers). */
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  const source = context?.source;
  if (typeof value === 'number' && !Number.isSafeInteger(value) && source && /^-?\d+$/.test(source)) {
    return BigInt(source);
  }
  return value;
}
