import type { Tensor } from '@nvcf/protocol';

/**
 * Prepares tensors to cross to another thread. With `move` (the caller gives its buffers away), each typed
 * array's ArrayBuffer is transferred without a copy, whole: a view into a request body keeps its offset on the
 * other side, and tensors sharing one body share it there too; the sender's views become empty. Node's
 * pooled Buffer slab is never moved (other Buffers live in it). Without `move` — a tensor its owner keeps,
 * or a row range of a batch it will slice again — just the view's bytes are copied and the copy transferred:
 * structured cloning would copy the whole buffer, not just the view. BYTES elements are small and cloned.
 */
export function forTransfer(tensors: readonly Tensor[], move = true): { tensors: Tensor[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const seen = new Set<ArrayBufferLike>();
  const moved = tensors.map((t): Tensor => {
    if (Array.isArray(t.data)) return t;
    const data = t.data;
    const { buffer } = data;
    const movable = move && buffer instanceof ArrayBuffer && buffer.byteLength > 0 && !isPoolSlab(buffer);
    if (movable) {
      if (!seen.has(buffer)) {
        seen.add(buffer);
        transfer.push(buffer);
      }
      return t;
    }
    const copy = copyView(data);
    transfer.push(copy.buffer);
    return { ...t, data: copy };
  });
  return { tensors: moved, transfer };
}

type NumericData = Exclude<Tensor['data'], Uint8Array[]>;

/** A copy in a buffer of its own, of the same array class (a Buffer becomes a plain Uint8Array). */
function copyView<T extends NumericData>(data: T): T & { buffer: ArrayBuffer } {
  const bytes = new Uint8Array(data.byteLength);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const View = (Buffer.isBuffer(data) ? Uint8Array : data.constructor) as new (
    b: ArrayBuffer,
  ) => T & { buffer: ArrayBuffer };
  return new View(bytes.buffer);
}

/** Node's Buffer.allocUnsafe pool: small Buffers are carved from slabs of exactly this size. */
function isPoolSlab(buffer: ArrayBuffer): boolean {
  return buffer.byteLength === Buffer.poolSize;
}
