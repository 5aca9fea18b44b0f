import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { decodeJsonValues, type JsonDatatype } from './decode-json-values.ts';

const label = "input 'INPUT0'";

describe('decodeJsonValues', () => {
  it('decodes each datatype into the storage tensor.ts prescribes', () => {
    expect(decodeJsonValues('BOOL', [true, false], label)).toEqual(new Uint8Array([1, 0]));
    expect(decodeJsonValues('UINT8', [0, 255], label)).toEqual(new Uint8Array([0, 255]));
    expect(decodeJsonValues('UINT16', [65535], label)).toEqual(new Uint16Array([65535]));
    expect(decodeJsonValues('UINT32', [4294967295], label)).toEqual(new Uint32Array([4294967295]));
    expect(decodeJsonValues('INT8', [-128, 127], label)).toEqual(new Int8Array([-128, 127]));
    expect(decodeJsonValues('INT16', [-32768], label)).toEqual(new Int16Array([-32768]));
    expect(decodeJsonValues('INT32', [-2147483648, 7], label)).toEqual(new Int32Array([-2147483648, 7]));
    expect(decodeJsonValues('INT64', [-9007199254740991, 3], label)).toEqual(
      new BigInt64Array([-9007199254740991n, 3n]),
    );
    expect(decodeJsonValues('UINT64', [9007199254740991], label)).toEqual(new BigUint64Array([9007199254740991n]));
    expect(decodeJsonValues('FP16', [1, -2, 65504, 1e9], label)).toEqual(
      new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x7c00]),
    );
    expect(decodeJsonValues('FP32', [0.1, 1e39], label)).toEqual(new Float32Array([0.1, Number.POSITIVE_INFINITY]));
    expect(decodeJsonValues('FP64', [0.1, -1e300], label)).toEqual(new Float64Array([0.1, -1e300]));
    expect(decodeJsonValues('BYTES', ['', 'héllo'], label)).toEqual([
      new Uint8Array([]),
      new Uint8Array([0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]),
    ]);
  });

  it('takes bigints at full 64-bit range, as an exact-integer JSON parser yields them', () => {
    expect(decodeJsonValues('INT64', [-(2n ** 63n), 2n ** 63n - 1n], label)).toEqual(
      new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]),
    );
    expect(decodeJsonValues('UINT64', [2n ** 64n - 1n], label)).toEqual(new BigUint64Array([2n ** 64n - 1n]));
    expect(decodeJsonValues('FP64', [2n ** 70n], label)).toEqual(new Float64Array([2 ** 70]));
  });

  it('accepts the non-finite strings only when asked', () => {
    const strings = ['NaN', 'Infinity', '-Infinity'];
    expect(decodeJsonValues('FP64', strings, label, { nonFiniteStrings: true })).toEqual(
      new Float64Array([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]),
    );
    expect(decodeJsonValues('FP16', strings, label, { nonFiniteStrings: true })).toEqual(
      new Uint16Array([0x7e00, 0x7c00, 0xfc00]),
    );
    const err = appErrorOf(() => decodeJsonValues('FP32', strings, label));
    expect(err.message).toBe(`${label}: element 0: expected a finite number for FP32, got "NaN"`);
  });

  it.each<[JsonDatatype, unknown, string]>([
    ['INT32', 'abc', `element 1: expected an integer for INT32, got "abc"`],
    ['INT32', 1.5, 'element 1: expected an integer for INT32, got 1.5'],
    ['INT32', 2 ** 31, 'element 1: 2147483648 is out of range for INT32 (-2147483648..2147483647)'],
    ['UINT8', 300, 'element 1: 300 is out of range for UINT8 (0..255)'],
    ['UINT8', -1, 'element 1: -1 is out of range for UINT8 (0..255)'],
    ['UINT32', -1, 'element 1: -1 is out of range for UINT32 (0..4294967295)'],
    ['INT8', 128, 'element 1: 128 is out of range for INT8 (-128..127)'],
    ['INT16', null, 'element 1: expected an integer for INT16, got null'],
    ['INT64', 1.5, 'element 1: expected an integer for INT64, got 1.5'],
    ['INT64', '5', `element 1: expected an integer for INT64, got "5"`],
    ['INT64', 2 ** 63, 'send INT64 values this large with the binary tensor data extension'],
    ['INT64', 2n ** 63n, 'element 1: 9223372036854775808 is out of range for INT64'],
    ['UINT64', -1, 'element 1: -1 is out of range for UINT64 (0..18446744073709551615)'],
    ['UINT64', 2 ** 53, 'beyond the exact range of JSON numbers'],
    ['BOOL', 1, 'element 1: expected true or false for BOOL, got 1'],
    ['BOOL', 'true', `element 1: expected true or false for BOOL, got "true"`],
    ['BYTES', 5, 'element 1: expected a string for BYTES, got 5'],
    ['FP32', null, 'element 1: expected a finite number for FP32, got null'],
    ['FP64', Number.NaN, 'element 1: expected a finite number for FP64'],
    ['FP16', true, 'element 1: expected a finite number for FP16, got true'],
  ])('%s rejects %o', (datatype, bad, message) => {
    const good = datatype === 'BOOL' ? true : datatype === 'BYTES' ? 'ok' : 0;
    const err = appErrorOf(() => decodeJsonValues(datatype, [good, bad], label));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain(`${label}: `);
    expect(err.message).toContain(message);
  });

  it('reports an array hidden in flat data as ragged', () => {
    const err = appErrorOf(() => decodeJsonValues('INT32', [1, [2]], label));
    expect(err.message).toBe(`${label}: 'data' is ragged or nested deeper than its shape`);
  });

  it('keeps long offending values out of the message', () => {
    const err = appErrorOf(() => decodeJsonValues('INT32', ['x'.repeat(10_000)], label));
    expect(err.message.length).toBeLessThan(120);
  });
});
