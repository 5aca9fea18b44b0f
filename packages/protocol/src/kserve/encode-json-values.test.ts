import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { encodeJsonValues } from './encode-json-values.ts';

const label = "output 'OUTPUT0'";

describe('encodeJsonValues', () => {
  it('joins integer storage', () => {
    expect(encodeJsonValues('INT32', new Int32Array([-1, 0, 7]), label)).toBe('[-1,0,7]');
    expect(encodeJsonValues('UINT8', new Uint8Array([]), label)).toBe('[]');
  });

  it('prints 64-bit integers with exact digits', () => {
    expect(encodeJsonValues('INT64', new BigInt64Array([-(2n ** 63n), 2n ** 53n + 1n]), label)).toBe(
      '[-9223372036854775808,9007199254740993]',
    );
    expect(encodeJsonValues('UINT64', new BigUint64Array([2n ** 64n - 1n]), label)).toBe('[18446744073709551615]');
  });

  it('prints BOOL as JSON booleans', () => {
    expect(encodeJsonValues('BOOL', new Uint8Array([1, 0, 1]), label)).toBe('[true,false,true]');
  });

  it('prints floats, quoting non-finite values and keeping -0', () => {
    expect(encodeJsonValues('FP32', new Float32Array([0.5, 1]), label)).toBe('[0.5,1]');
    expect(encodeJsonValues('FP32', new Float32Array([1, -0]), label)).toBe('[1,-0]');
    expect(encodeJsonValues('FP64', new Float64Array([Number.NaN, Infinity, -Infinity, -0, 0.1]), label)).toBe(
      '["NaN","Infinity","-Infinity",-0,0.1]',
    );
  });

  it('prints FP16 bit patterns as their exact values', () => {
    expect(encodeJsonValues('FP16', new Uint16Array([0x3c00, 0x7bff, 0x0001, 0x8000, 0xfc00]), label)).toBe(
      '[1,65504,5.960464477539063e-8,-0,"-Infinity"]',
    );
  });

  it('prints BYTES as escaped JSON strings', () => {
    const utf8 = new TextEncoder();
    const text = encodeJsonValues(
      'BYTES',
      ['a"b', 'line\nbreak', 'é', '\u{feff}bom'].map((s) => utf8.encode(s)),
      label,
    );
    expect(text).toBe('["a\\"b","line\\nbreak","é","\u{feff}bom"]');
    expect(JSON.parse(text)).toEqual(['a"b', 'line\nbreak', 'é', '\u{feff}bom']);
  });

  it('refuses BF16 and non-UTF-8 BYTES, which need binary_data_output', () => {
    const bf16 = appErrorOf(() => encodeJsonValues('BF16', new Uint16Array([0x3f80]), label));
    expect(bf16.code).toBe('INVALID_ARGUMENT');
    expect(bf16.message).toContain('binary_data_output');
    const bytes = appErrorOf(() => encodeJsonValues('BYTES', [new Uint8Array([0xff, 0xfe])], label));
    expect(bytes.code).toBe('INVALID_ARGUMENT');
    expect(bytes.message).toContain(`${label}: element 0 is not valid UTF-8`);
    expect(bytes.message).toContain('binary_data_output');
  });
});
