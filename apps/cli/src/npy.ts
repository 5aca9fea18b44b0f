/**
 * NumPy `.npy` files (format versions 1.0, 2.0 and 3.0, https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)
 * read into a KServe V2 tensor. The format is small: a magic string, a version, the header's length (uint16 in
 * 1.0, uint32 after), then a Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`
 * (latin-1 text in 1.0 and 2.0, UTF-8 in 3.0), then the elements. Written here rather than taken from npm: the one
 * Node package for it (npyjs) fetches URLs through a fetch polyfill and does not check the element count against
 * the shape, which is what turns a truncated file into a clear error instead of a confusing 400 from the model.
 */
import type { KserveData, KserveDatatype } from '@nvcf/client';

export interface NpyTensor {
  datatype: KserveDatatype;
  shape: number[];
  /** The SDK's storage for the datatype: BOOL 0/1 bytes, FP16 raw bit patterns, INT64/UINT64 BigInt arrays. */
  data: KserveData;
}

type Ctor = { new (buffer: ArrayBuffer): Exclude<KserveData, Uint8Array[]>; BYTES_PER_ELEMENT: number };

/** The little-endian (or single-byte) dtypes a KServe V2 tensor can carry, by their code after the byte order. */
const DTYPES: Readonly<Record<string, { datatype: KserveDatatype; ctor: Ctor }>> = {
  b1: { datatype: 'BOOL', ctor: Uint8Array },
  i1: { datatype: 'INT8', ctor: Int8Array },
  u1: { datatype: 'UINT8', ctor: Uint8Array },
  i2: { datatype: 'INT16', ctor: Int16Array },
  u2: { datatype: 'UINT16', ctor: Uint16Array },
  i4: { datatype: 'INT32', ctor: Int32Array },
  u4: { datatype: 'UINT32', ctor: Uint32Array },
  i8: { datatype: 'INT64', ctor: BigInt64Array },
  u8: { datatype: 'UINT64', ctor: BigUint64Array },
  f2: { datatype: 'FP16', ctor: Uint16Array },
  f4: { datatype: 'FP32', ctor: Float32Array },
  f8: { datatype: 'FP64', ctor: Float64Array },
};
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Reads an `.npy` file's bytes. @throws Error naming what is wrong (`label` is the file's name). */
export function readNpy(bytes: Uint8Array, label = 'npy'): NpyTensor {
  const fail = (why: string): never => {
    throw new Error(`${label}: ${why}`);
  };
  if (bytes.byteLength < 10 || MAGIC.some((b, i) => bytes[i] !== b))
    fail('not a NumPy .npy file (no \\x93NUMPY magic)');
  const major = bytes[6] as number;
  if (major < 1 || major > 3) fail(`unsupported .npy format version ${major}.${bytes[7]}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerStart = major === 1 ? 10 : 12;
  if (bytes.byteLength < headerStart) fail('the header is cut short');
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const dataStart = headerStart + headerLength;
  if (dataStart > bytes.byteLength) fail('the header is cut short');
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(headerStart, dataStart));
  const header = parseHeader(text, fail);

  const descr = header.descr;
  if (typeof descr !== 'string') fail('structured dtypes are not supported (one tensor per file)');
  const order = (descr as string)[0];
  const code = (descr as string).slice(1);
  const dtype = DTYPES[code];
  if (!dtype || (order !== '<' && order !== '|')) {
    fail(
      order === '>' && DTYPES[code]
        ? `big-endian dtype '${descr}': save it little-endian (arr.astype('<${code}'))`
        : `dtype '${descr}' has no KServe datatype (supported: ${Object.keys(DTYPES).join(' ')}, little-endian)`,
    );
  }
  const { datatype, ctor } = dtype as { datatype: KserveDatatype; ctor: Ctor };
  const shape = header.shape;
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === 'number' && Number.isSafeInteger(d) && d >= 0)) {
    fail("'shape' must be a tuple of non-negative integers");
  }
  const dims = shape as number[];
  if (header.fortran_order === true && dims.filter((d) => d > 1).length > 1) {
    fail('the array is in Fortran order: save a C-ordered one (np.ascontiguousarray(arr))');
  }
  const count = dims.reduce((a, d) => a * d, 1);
  const expected = count * ctor.BYTES_PER_ELEMENT;
  const actual = bytes.byteLength - dataStart;
  if (actual !== expected) {
    fail(`shape (${dims.join(', ')}) of ${descr} needs ${expected} bytes of data, the file holds ${actual}`);
  }
  // A copy: the data's offset in the file need not suit the typed array's alignment.
  const own = bytes.slice(dataStart);
  if (!LITTLE_ENDIAN_HOST) swapInPlace(own, ctor.BYTES_PER_ELEMENT);
  if (datatype === 'BOOL') for (let i = 0; i < own.length; i++) own[i] = own[i] ? 1 : 0;
  return { datatype, shape: [...dims], data: new ctor(own.buffer) };
}

function swapInPlace(bytes: Uint8Array, size: number): void {
  if (size === 1) return;
  for (let i = 0; i < bytes.length; i += size) bytes.subarray(i, i + size).reverse();
}

type PyValue = string | number | boolean | null | PyValue[] | { [key: string]: PyValue };

/** The header's dict literal: strings, integers, True/False/None, tuples, lists and dicts — all that NumPy writes. */
function parseHeader(text: string, fail: (why: string) => never): Record<string, PyValue> {
  let i = 0;
  const skip = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const expect = (ch: string) => {
    skip();
    if (text[i] !== ch) fail(`malformed header: expected '${ch}' at ${i} in ${JSON.stringify(text.trim())}`);
    i++;
  };
  const items = <T>(close: string, item: () => T): T[] => {
    const out: T[] = [];
    for (;;) {
      skip();
      if (text[i] === close) break;
      out.push(item());
      skip();
      if (text[i] === ',') i++;
      else if (text[i] !== close) fail(`malformed header: expected ',' or '${close}' at ${i}`);
    }
    i++;
    return out;
  };
  const value = (): PyValue => {
    skip();
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) fail('malformed header: an unterminated string');
      const s = text.slice(i + 1, end);
      i = end + 1;
      return s;
    }
    if (ch === '(' || ch === '[') {
      i++;
      return items(ch === '(' ? ')' : ']', value);
    }
    if (ch === '{') {
      i++;
      const entries = items('}', () => {
        const key = value();
        if (typeof key !== 'string') fail('malformed header: a dict key that is not a string');
        expect(':');
        return [key as string, value()] as const;
      });
      return Object.fromEntries(entries);
    }
    const word = /^(-?\d+|True|False|None)/.exec(text.slice(i))?.[0];
    if (word === undefined) fail(`malformed header: unexpected '${ch ?? 'end'}' at ${i}`);
    i += (word as string).length;
    return word === 'True' ? true : word === 'False' ? false : word === 'None' ? null : Number(word);
  };
  const dict = value();
  if (typeof dict !== 'object' || dict === null || Array.isArray(dict)) fail('malformed header: not a dict');
  return dict as Record<string, PyValue>;
}
