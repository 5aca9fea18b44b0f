/**
 * `--input NAME=@tensor.npy` and `--input 'NAME=[[1,2],[3,4]]'` into the SDK's tensor inputs, and a decoded KServe
 * response back into KServe V2 JSON for printing.
 */
import { readFile } from 'node:fs/promises';
import {
  halfBitsToFloat,
  KSERVE_DATATYPES,
  type KserveDatatype,
  type KserveResponse,
  type KserveTensor,
  type TensorInput,
} from '@nvcf/client';
import { UsageError } from './errors.ts';
import { readNpy } from './npy.ts';

/** What the model says about an input, when the CLI could look it up (`FunctionDto.model.inputs`). */
export interface InputSpec {
  datatype: string;
  shape: number[];
}

export interface InputOptions {
  /** `--datatype NAME=TYPE` */
  datatypes: Map<string, KserveDatatype>;
  /** `--shape NAME=d1,d2` */
  shapes: Map<string, number[]>;
  /** The model's declared inputs, asked for only when a JSON input names no datatype. */
  modelInputs?: () => Promise<Map<string, InputSpec>>;
}

/** `NAME=VALUE` of a repeatable option, split at the first `=`. */
export function splitAssignment(option: string, spec: string): [string, string] {
  const at = spec.indexOf('=');
  if (at <= 0) throw new UsageError(`${option} takes NAME=VALUE, got '${spec}'`);
  return [spec.slice(0, at), spec.slice(at + 1)];
}

export function parseDatatypes(specs: string[]): Map<string, KserveDatatype> {
  return new Map(
    specs.map((spec) => {
      const [name, value] = splitAssignment('--datatype', spec);
      const datatype = value.toUpperCase();
      if (!(KSERVE_DATATYPES as readonly string[]).includes(datatype)) {
        throw new UsageError(`--datatype ${name}: '${value}' is not one of ${KSERVE_DATATYPES.join(', ')}`);
      }
      return [name, datatype as KserveDatatype];
    }),
  );
}

export function parseShapes(specs: string[]): Map<string, number[]> {
  return new Map(
    specs.map((spec) => {
      const [name, value] = splitAssignment('--shape', spec);
      const dims = value.split(',').map((d) => Number(d.trim()));
      if (value.trim() === '' || !dims.every((d) => Number.isSafeInteger(d) && d >= 0)) {
        throw new UsageError(`--shape ${name}: '${value}' is not a comma-separated list of non-negative integers`);
      }
      return [name, dims];
    }),
  );
}

/** The shape of a rectangular nested array, and its elements in row-major order. */
function flatten(value: unknown, name: string): { shape: number[]; values: unknown[] } {
  if (!Array.isArray(value)) return { shape: [1], values: [value] };
  const shape: number[] = [];
  for (let level: unknown = value; Array.isArray(level); level = level[0]) shape.push(level.length);
  const values = value.flat(Number.POSITIVE_INFINITY);
  const count = shape.reduce((a, d) => a * d, 1);
  if (values.length !== count) throw new UsageError(`--input ${name}: the nested array is not rectangular`);
  return { shape, values };
}

/** The SDK input for one `--input NAME=@file.npy` or `--input NAME=<JSON>`. */
export async function readInput(spec: string, opts: InputOptions): Promise<TensorInput> {
  const [name, value] = splitAssignment('--input', spec);
  const shape = opts.shapes.get(name);
  if (value.startsWith('@')) {
    const path = value.slice(1);
    const tensor = readNpy(new Uint8Array(await readFile(path)), path);
    const given = opts.datatypes.get(name);
    if (given && given !== tensor.datatype) {
      throw new UsageError(`--input ${name}: ${path} holds ${tensor.datatype}, --datatype says ${given}`);
    }
    return { name, datatype: tensor.datatype, shape: shape ?? tensor.shape, data: tensor.data };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`--input ${name}: '${value}' is neither @FILE.npy nor JSON`);
  }
  const flat = flatten(parsed, name);
  let datatype = opts.datatypes.get(name);
  if (!datatype) {
    const declared = (await opts.modelInputs?.())?.get(name);
    if (!declared) throw new UsageError(`--input ${name}: give its type with --datatype ${name}=TYPE`);
    datatype = declared.datatype as KserveDatatype;
  }
  return { name, datatype, shape: shape ?? flat.shape, data: flat.values as number[] };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const float32 = new Float32Array(1);
const bits32 = new Uint32Array(float32.buffer);
function bf16ToFloat(bits: number): number {
  bits32[0] = bits << 16;
  return float32[0] as number;
}

/** A float as JSON: NaN and ±Infinity as the strings KServe JSON clients accept for them, -0 keeping its sign. */
function floatJson(x: number): string {
  if (Number.isNaN(x)) return '"NaN"';
  if (!Number.isFinite(x)) return x > 0 ? '"Infinity"' : '"-Infinity"';
  return Object.is(x, -0) ? '-0' : String(x);
}

function dataJson(t: KserveTensor): { data: string; parameters?: Record<string, unknown> } {
  switch (t.datatype) {
    case 'BYTES': {
      const elements = t.data as Uint8Array[];
      try {
        return { data: JSON.stringify(elements.map((e) => strictUtf8.decode(e))) };
      } catch {
        // Bytes that are not text: base64 per element, and the tensor says so.
        const b64 = elements.map((e) => Buffer.from(e.buffer, e.byteOffset, e.byteLength).toString('base64'));
        return { data: JSON.stringify(b64), parameters: { content_encoding: 'base64' } };
      }
    }
    case 'BOOL':
      return { data: `[${Array.from(t.data as Uint8Array, (v) => (v ? 'true' : 'false')).join(',')}]` };
    case 'FP16':
      return { data: `[${Array.from(t.data as Uint16Array, (b) => floatJson(halfBitsToFloat(b))).join(',')}]` };
    case 'BF16':
      return { data: `[${Array.from(t.data as Uint16Array, (b) => floatJson(bf16ToFloat(b))).join(',')}]` };
    case 'FP32':
    case 'FP64':
      return { data: `[${Array.from(t.data as ArrayLike<number>, floatJson).join(',')}]` };
    default:
      // Integers, BigInts included, keep their exact digits (JSON.stringify throws on a BigInt).
      return { data: `[${Array.from(t.data as ArrayLike<number | bigint>).join(',')}]` };
  }
}

/** A decoded KServe response as KServe V2 JSON text (one line, flat `data`, as the gateway answers it). */
export function kserveJson(res: KserveResponse): string {
  const fields = [`"model_name":${JSON.stringify(res.modelName)}`];
  if (res.modelVersion !== undefined) fields.push(`"model_version":${JSON.stringify(res.modelVersion)}`);
  if (res.id !== undefined) fields.push(`"id":${JSON.stringify(res.id)}`);
  if (res.parameters) fields.push(`"parameters":${JSON.stringify(res.parameters)}`);
  const outputs = [...res.outputs.values()].map((t) => {
    const { data, parameters } = dataJson(t);
    const params = t.parameters || parameters ? { ...t.parameters, ...parameters } : undefined;
    return `{"name":${JSON.stringify(t.name)},"datatype":"${t.datatype}","shape":${JSON.stringify(t.shape)}${
      params ? `,"parameters":${JSON.stringify(params)}` : ''
    },"data":${data}}`;
  });
  fields.push(`"outputs":[${outputs.join(',')}]`);
  return `{${fields.join(',')}}`;
}
