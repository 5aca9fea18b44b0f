import { floatToHalfBits } from '@nvcf/client';
import { describe, expect, it } from 'vitest';
import { readNpy } from './npy.ts';
import { bytesOf, npyFile } from './testing/npy-file.ts';

const hex = (s: string) => Uint8Array.from(s.match(/../g) ?? [], (b) => Number.parseInt(b, 16));

describe('readNpy: files NumPy wrote (np.lib.format.write_array, NumPy 2.4)', () => {
  it('reads a 2×3 <f4 (format 1.0), a |b1 vector, a 2×2 <i8 (format 2.0) and a <f2 scalar', () => {
    const f4 = readNpy(
      hex(
        '934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000000803f0000004000004040000080400000a040',
      ),
    );
    expect(f4).toEqual({ datatype: 'FP32', shape: [2, 3], data: new Float32Array([0, 1, 2, 3, 4, 5]) });

    const b1 = readNpy(
      hex(
        '934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a010001',
      ),
    );
    expect(b1).toEqual({ datatype: 'BOOL', shape: [3], data: new Uint8Array([1, 0, 1]) });

    const i8 = readNpy(
      hex(
        '934e554d50590200740000007b276465736372273a20273c6938272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2032292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0100000000000000feffffffffffffff0300000000000000fcffffffffffffff',
      ),
    );
    expect(i8).toEqual({ datatype: 'INT64', shape: [2, 2], data: new BigInt64Array([1n, -2n, 3n, -4n]) });

    const f2 = readNpy(
      hex(
        '934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a003e',
      ),
    );
    // FP16 stays in the SDK's storage: the raw bit pattern.
    expect(f2).toEqual({ datatype: 'FP16', shape: [], data: new Uint16Array([floatToHalfBits(1.5)]) });
  });
});

describe('readNpy: every dtype and header version', () => {
  const cases = [
    ['<f4', 'FP32', new Float32Array([1.5, -2, 3])],
    ['<f8', 'FP64', new Float64Array([1.5, -2, 3])],
    ['|i1', 'INT8', new Int8Array([-1, 2, -3])],
    ['<i2', 'INT16', new Int16Array([-1, 2, -3])],
    ['<i4', 'INT32', new Int32Array([-1, 2, -3])],
    ['<i8', 'INT64', new BigInt64Array([-1n, 2n ** 62n, -3n])],
    ['|u1', 'UINT8', new Uint8Array([1, 2, 255])],
    ['<u2', 'UINT16', new Uint16Array([1, 2, 65535])],
    ['<u4', 'UINT32', new Uint32Array([1, 2, 2 ** 32 - 1])],
    ['<u8', 'UINT64', new BigUint64Array([1n, 2n, 2n ** 64n - 1n])],
    ['<f2', 'FP16', new Uint16Array([floatToHalfBits(0.5), floatToHalfBits(-2), floatToHalfBits(65504)])],
  ] as const;

  for (const version of [1, 2, 3] as const) {
    it.each(cases)(`format ${version}.0: %s → %s`, (descr, datatype, data) => {
      const t = readNpy(npyFile(descr, [1, 3], bytesOf(data), { version }));
      expect(t).toEqual({ datatype, shape: [1, 3], data });
    });
  }

  it('normalizes any nonzero |b1 byte to 1 (BOOL is 0/1 in the SDK)', () => {
    expect(readNpy(npyFile('|b1', [4], new Uint8Array([0, 2, 255, 1]))).data).toEqual(new Uint8Array([0, 1, 1, 1]));
  });

  it('reads from a view at any offset (the data need not be aligned in the caller’s buffer)', () => {
    const file = npyFile('<f8', [2], bytesOf(new Float64Array([1.25, -7])));
    const shifted = new Uint8Array(file.byteLength + 3);
    shifted.set(file, 3);
    expect(readNpy(shifted.subarray(3)).data).toEqual(new Float64Array([1.25, -7]));
  });

  it('reads empty arrays, scalars, and a Fortran-ordered vector (the same bytes as C order)', () => {
    expect(readNpy(npyFile('<i4', [0, 5], new Uint8Array()))).toEqual({
      datatype: 'INT32',
      shape: [0, 5],
      data: new Int32Array(),
    });
    expect(readNpy(npyFile('<i4', [], bytesOf(new Int32Array([7])))).shape).toEqual([]);
    expect(readNpy(npyFile('<i4', [3], bytesOf(new Int32Array([1, 2, 3])), { fortranOrder: true })).shape).toEqual([3]);
  });

  it('reads a format 3.0 header with UTF-8 in it, and double-quoted strings', () => {
    const header = `{"descr": "<i2", "fortran_order": False, "shape": (2,), "note": "é"}`;
    const t = readNpy(npyFile('', [], bytesOf(new Int16Array([5, 6])), { version: 3, header }));
    expect(t).toEqual({ datatype: 'INT16', shape: [2], data: new Int16Array([5, 6]) });
  });
});

describe('readNpy: refusals say what is wrong', () => {
  const ints = bytesOf(new Int32Array([1, 2, 3, 4]));
  it.each([
    ['not npy', new TextEncoder().encode('{"inputs": []}'), /not a NumPy \.npy file/],
    [
      'version 4',
      (() => {
        const f = npyFile('<i4', [4], ints);
        f[6] = 4;
        return f;
      })(),
      /format version 4\.0/,
    ],
    ['cut-short header', npyFile('<i4', [4], ints).subarray(0, 40), /header is cut short/],
    ['truncated data', npyFile('<i4', [4], ints).subarray(0, -1), /needs 16 bytes of data, the file holds 15/],
    ['trailing data', npyFile('<i4', [3], ints), /needs 12 bytes of data, the file holds 16/],
    ['big-endian', npyFile('>i4', [4], ints), /big-endian dtype '>i4': save it little-endian/],
    ['complex', npyFile('<c8', [2], ints), /dtype '<c8' has no KServe datatype/],
    ['strings', npyFile('<U2', [2], ints), /dtype '<U2' has no KServe datatype/],
    ['Fortran order', npyFile('<i4', [2, 2], ints, { fortranOrder: true }), /Fortran order/],
    [
      'structured',
      npyFile('', [], ints, { header: "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (4,), }" }),
      /structured dtypes/,
    ],
    [
      'bad shape',
      npyFile('', [], ints, { header: "{'descr': '<i4', 'fortran_order': False, 'shape': (-4,), }" }),
      /shape/,
    ],
    ['malformed', npyFile('', [], ints, { header: "{'descr': '<i4', 'fortran_order': Maybe}" }), /malformed header/],
  ])('%s', (_name, bytes, message) => {
    expect(() => readNpy(bytes, 'x.npy')).toThrow(message);
    expect(() => readNpy(bytes, 'x.npy')).toThrow(/^x\.npy: /);
  });
});
