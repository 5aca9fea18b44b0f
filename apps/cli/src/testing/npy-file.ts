/** Test support: `.npy` files as NumPy writes them (magic, version, padded header, data), for the reader's tests. */

export interface NpyFileOptions {
  version?: 1 | 2 | 3;
  fortranOrder?: boolean;
  /** The header dict as written, replacing the one built from descr/shape (for malformed-header tests). */
  header?: string;
}

/** An `.npy` file holding `data` (already in the dtype's little-endian layout) with the given descr and shape. */
export function npyFile(descr: string, shape: number[], data: Uint8Array, opts: NpyFileOptions = {}): Uint8Array {
  const version = opts.version ?? 1;
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict =
    opts.header ??
    `{'descr': '${descr}', 'fortran_order': ${opts.fortranOrder ? 'True' : 'False'}, 'shape': ${shapeText}, }`;
  const prefix = version === 1 ? 10 : 12;
  // NumPy pads the header with spaces and ends it with a newline so the data starts 64-byte aligned.
  const encoded = new TextEncoder().encode(dict);
  const total = Math.ceil((prefix + encoded.length + 1) / 64) * 64;
  const header = new Uint8Array(total - prefix).fill(0x20);
  header.set(encoded);
  header[header.length - 1] = 0x0a;
  const out = new Uint8Array(total + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, header.length, true);
  else view.setUint32(8, header.length, true);
  out.set(header, prefix);
  out.set(data, total);
  return out;
}

/** The bytes of a typed array (little-endian on every machine these tests run on). */
export const bytesOf = (typed: ArrayBufferView) => new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
