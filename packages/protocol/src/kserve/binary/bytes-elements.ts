import { AppError } from '../../errors.ts';

/** Each BYTES element on the wire: a 4-byte little-endian unsigned length, then that many bytes. */
const PREFIX = 4;
const MAX_ELEMENT_BYTES = 0xffff_ffff;

/** The wire size of BYTES elements: the byte strings plus a 4-byte prefix each. */
export function bytesElementsByteSize(elements: readonly Uint8Array[]): number {
  let total = 0;
  for (const element of elements) total += PREFIX + element.byteLength;
  return total;
}

/**
 * Serializes BYTES elements in the binary tensor data layout (Triton binary data extension):
 * every element is a 4-byte little-endian length followed by its raw bytes, elements concatenated.
 *
 * @param label how messages name the tensor, e.g. `output 'OUTPUT0'`.
 * @throws AppError INVALID_ARGUMENT for an element longer than a 4-byte length can describe.
 * @example
 * encodeBytesElements([Buffer.from('ab'), new Uint8Array(0)], "output 'Y'");
 * // <02 00 00 00 61 62 00 00 00 00>
 */
export function encodeBytesElements(elements: readonly Uint8Array[], label: string): Buffer {
  const out = Buffer.allocUnsafe(bytesElementsByteSize(elements));
  let offset = 0;
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] as Uint8Array;
    if (element.byteLength > MAX_ELEMENT_BYTES) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: BYTES element ${i} has ${element.byteLength} bytes; the binary format allows at most ${MAX_ELEMENT_BYTES}`,
      );
    }
    offset = out.writeUInt32LE(element.byteLength, offset);
    out.set(element, offset);
    offset += element.byteLength;
  }
  return out;
}

/**
 * Parses exactly `count` length-prefixed BYTES elements that must fill `bytes` to the last byte.
 * The elements are zero-copy views into `bytes` (plain `Uint8Array`s, like the JSON decoder's).
 *
 * @param count the element count from the tensor's shape, already checked against the element
 *   limit; it is checked against the byte length before the element array is allocated.
 * @param label how messages name the tensor, e.g. `input 'INPUT0'`.
 * @throws AppError INVALID_ARGUMENT naming the tensor and the element: a truncated length prefix, a
 *   length running past the end, trailing bytes after the last element, or too few bytes for the
 *   element count.
 * @example
 * decodeBytesElements(Buffer.from([1, 0, 0, 0, 0x61]), 1, "input 'X'"); // [Uint8Array [0x61]]
 */
export function decodeBytesElements(bytes: Uint8Array, count: number, label: string): Uint8Array[] {
  const total = bytes.byteLength;
  // Checked first: a shape of a million elements must not allocate a million-slot array for a 10-byte body.
  if (count * PREFIX > total) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: ${count} BYTES elements need at least ${count * PREFIX} bytes (a 4-byte length prefix each), binary data has ${total}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, total);
  const out = new Array<Uint8Array>(count);
  let offset = 0;
  for (let i = 0; i < count; i++) {
    if (offset + PREFIX > total) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: BYTES element ${i}: truncated length prefix at byte ${offset} (binary data has ${total} bytes)`,
      );
    }
    const length = view.getUint32(offset, true);
    offset += PREFIX;
    if (length > total - offset) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: BYTES element ${i}: length prefix says ${length} bytes but only ${total - offset} remain`,
      );
    }
    out[i] = new Uint8Array(bytes.buffer, bytes.byteOffset + offset, length);
    offset += length;
  }
  if (offset !== total) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: ${total - offset} unexpected bytes after the last of ${count} BYTES elements (shape and data disagree)`,
    );
  }
  return out;
}
