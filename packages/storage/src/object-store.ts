import type { Readable } from 'node:stream';

/** What is kept beside an object's bytes. */
export interface ObjectMeta {
  contentType: string;
  /** Free-form string pairs (S3's `x-amz-meta-*`), e.g. `nvcf-asset-description`. */
  metadata?: Record<string, string>;
}

export interface PutOptions {
  /** Refuse bodies longer than this (AppError PAYLOAD_TOO_LARGE); defaults to the store's own limit. */
  maxBytes?: number;
}

export interface StoredObject {
  /** The bytes; the caller must consume or destroy it (it holds an open file or connection). */
  body: Readable;
  size: number;
  contentType: string;
  metadata: Record<string, string>;
}

/**
 * Pluggable object storage (a local directory, S3-compatible services). Keys are `/`-separated
 * segments of `[A-Za-z0-9._-]` that do not start with a dot, e.g. `assets/<uuid>`.
 *
 * A `put` is atomic: readers see the old object or the new one, never a partial one, and a failed or
 * refused put leaves no trace. A second `put` under the same key replaces the object.
 */
export interface ObjectStore {
  /** Stores `body` (streamed when it is a Readable); PAYLOAD_TOO_LARGE past the byte limit. */
  put(key: string, body: Buffer | Readable, meta: ObjectMeta, opts?: PutOptions): Promise<{ size: number }>;
  /** The object, or undefined when there is none. */
  get(key: string): Promise<StoredObject | undefined>;
  /** Removes the object; no error when there is none. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
}
