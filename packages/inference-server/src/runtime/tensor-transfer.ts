import type { Tensor } from '@nvcf/protocol';

/**
 * Prepares tensors to cross to another thread. With `move`, each typed array that is the sole view of its
 * ArrayBuffer is transferred without a copy (the sender's view becomes empty: the tensor belongs to the
 * receiver). Any other view — a slice of a request body, Node's pooled Buffer slab, a row range of a batch, or
 * a tensor its owner keeps — is copied, just the view's bytes, and the copy transferred: transferring the view
 * would detach the whole buffer under everyone else holding it, and structured cloning would copy the whole
 * buffer, not just the view. BYTES elements are small and cloned.
 */
export function forTransfer(tensors: readonly Tensor[], move = true): { tensors: Tensor[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const seen = new Set<ArrayBufferLike>();
  const moved = tensors.map((t): Tensor => {
    if (Array.isArray(t.data)) return t;
    const data = t.data;
    const { buffer } = data;
    const sole =
      move &&
      buffer instanceof ArrayBuffer &&
      !seen.has(buffer) &&
      data.byteOffset === 0 &&
      data.byteLength === buffer.byteLength &&
      // Node's Buffer.allocUnsafe pool and external (native-owned) memory cannot be moved.
      buffer.byteLength > 0 &&
      !isPooled(data);
    if (sole) {
      seen.add(buffer);
      transfer.push(buffer);
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

/** A Buffer carved from Node's shared pool still spans the pool only if it is exactly the pool's size. */
function isPooled(data: ArrayBufferView): boolean {
  return Buffer.isBuffer(data) && data.byteLength === Buffer.poolSize;
}
