import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../app-error-of.ts';
import { bytesElementsByteSize, decodeBytesElements, encodeBytesElements } from './bytes-elements.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);
const decodeError = (data: Uint8Array, count: number) =>
  appErrorOf(() => decodeBytesElements(data, count, "input 'S'"));

describe('BYTES elements', () => {
  it('writes a 4-byte little-endian length before each element', () => {
    const out = encodeBytesElements([bytes(0x61, 0x62), bytes(), bytes(0xff)], "output 'S'");
    expect([...out]).toEqual([2, 0, 0, 0, 0x61, 0x62, 0, 0, 0, 0, 1, 0, 0, 0, 0xff]);
  });

  it('round-trips any byte strings, empty ones included, at any offset', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }), fc.nat(7), (elements, pad) => {
        const encoded = encodeBytesElements(elements, "input 'S'");
        expect(encoded.byteLength).toBe(bytesElementsByteSize(elements));
        const padded = new Uint8Array(pad + encoded.byteLength);
        padded.set(encoded, pad);
        const decoded = decodeBytesElements(padded.subarray(pad), elements.length, "input 'S'");
        expect(decoded).toEqual(elements);
        for (const element of decoded) expect(element.constructor).toBe(Uint8Array);
      }),
    );
  });

  it('decodes zero elements from zero bytes', () => {
    expect(decodeBytesElements(bytes(), 0, "input 'S'")).toEqual([]);
  });

  it('refuses a truncated length prefix', () => {
    const err = decodeError(bytes(5, 0, 0, 0, 1, 2, 3, 4, 5, 9, 9), 2);
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe(
      "input 'S': BYTES element 1: truncated length prefix at byte 9 (binary data has 11 bytes)",
    );
  });

  it('refuses a length that runs past the end', () => {
    const err = decodeError(bytes(10, 0, 0, 0, 1, 2), 1);
    expect(err.message).toBe("input 'S': BYTES element 0: length prefix says 10 bytes but only 2 remain");
  });

  it('refuses a length prefix of 2^32-1 without allocating for it', () => {
    const err = decodeError(bytes(0xff, 0xff, 0xff, 0xff, 1), 1);
    expect(err.message).toContain('length prefix says 4294967295 bytes but only 1 remain');
  });

  it('refuses trailing bytes after the last element', () => {
    const err = decodeError(bytes(1, 0, 0, 0, 0x61, 0x63), 1);
    expect(err.message).toBe(
      "input 'S': 1 unexpected bytes after the last of 1 BYTES elements (shape and data disagree)",
    );
    expect(decodeError(bytes(0), 0).message).toContain('1 unexpected bytes after the last of 0 BYTES elements');
  });

  it('refuses more elements than the bytes can hold before allocating them', () => {
    const err = decodeError(bytes(0, 0, 0, 0, 0, 0, 0, 0), 1_000_000);
    expect(err.message).toBe(
      "input 'S': 1000000 BYTES elements need at least 4000000 bytes (a 4-byte length prefix each), binary data has 8",
    );
  });

  it('refuses fewer elements than the shape says', () => {
    // Two empty elements (8 bytes) where the shape asks for three.
    expect(decodeError(bytes(0, 0, 0, 0, 0, 0, 0, 0), 3).message).toContain('3 BYTES elements need at least 12 bytes');
  });
});
