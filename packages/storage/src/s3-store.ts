import { pipeline, Readable, Transform } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError } from '@nvcf/protocol';
import type { ObjectMeta, ObjectStore, StoredObject } from './object-store.ts';

export interface S3StoreOptions {
  /** e.g. `http://minio:9000`; absent: AWS itself. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Largest object accepted by `put` (PAYLOAD_TOO_LARGE above). */
  maxBytes?: number;
  /** Bytes per multipart part (S3's minimum, 5 MiB, by default). */
  partSize?: number;
}

/** S3's smallest part (all but the last): https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html */
export const S3_MIN_PART_SIZE = 5 * 1024 * 1024;
/**
 * Parts in flight per upload. An upload holds at most `(PART_QUEUE + 1) × partSize` bytes in memory
 * (~15 MiB at the default part size) whatever the object's size, instead of the whole object.
 */
const PART_QUEUE = 2;

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

const tooLarge = (max: number) => new AppError('PAYLOAD_TOO_LARGE', `object exceeds ${max} bytes`);

/**
 * `body` with a byte count that fails the stream (and, through `pipeline`, destroys the source: an HTTP
 * upload stops being read) as soon as it passes `max`.
 */
function bounded(body: Readable, max: number): { stream: Readable; size: () => number; refused: () => boolean } {
  let size = 0;
  let refused = false;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size <= max) return done(null, chunk);
      refused = true;
      done(tooLarge(max));
    },
  });
  // The error reaches the consumer (the uploader) through `counter` itself; nothing to do here.
  const stream = pipeline(body, counter, () => {});
  return { stream, size: () => size, refused: () => refused };
}

/**
 * Objects in an S3-compatible service (MinIO, AWS S3): what several machines share, where the local
 * directory store only serves one. The bucket is created when missing.
 *
 * A put streams: small bodies go as one PutObject, larger ones as a multipart upload (parts of
 * `partSize`), so memory per upload stays bounded. Either way S3 makes the object visible only once
 * complete (atomic). A body past the limit fails the stream at that byte; the multipart upload is then
 * aborted, which discards its parts. Should an abort itself fail, the parts stay invisible but billed:
 * give the bucket a lifecycle rule `AbortIncompleteMultipartUpload` as a backstop
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpu-abort-incomplete-mpu-lifecycle-config.html).
 */
export async function createS3Store(opts: S3StoreOptions): Promise<ObjectStore> {
  const client = new S3Client({
    region: opts.region,
    ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
  });
  const Bucket = opts.bucket;
  const partSize = Math.max(S3_MIN_PART_SIZE, opts.partSize ?? 0);
  try {
    await client.send(new HeadBucketCommand({ Bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket })).catch((err: unknown) => {
      if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw err;
    });
  }
  const limit = opts.maxBytes ?? Number.MAX_SAFE_INTEGER;
  const send = (Key: string, Body: Buffer | Readable, meta: ObjectMeta) =>
    new Upload({
      client,
      queueSize: PART_QUEUE,
      partSize,
      params: { Bucket, Key, Body, ContentType: meta.contentType, Metadata: meta.metadata ?? {} },
    }).done();
  return {
    async put(key, body, meta, putOpts) {
      const max = putOpts?.maxBytes ?? limit;
      if (Buffer.isBuffer(body)) {
        if (body.length > max) throw tooLarge(max);
        await send(key, body, meta);
        return { size: body.length };
      }
      const source = bounded(body, max);
      try {
        await send(key, source.stream, meta);
      } catch (err) {
        if (!body.destroyed) body.destroy();
        // The uploader reports a failed abort in place of the stream's error: the refusal wins.
        if (source.refused()) throw tooLarge(max);
        throw err;
      }
      return { size: source.size() };
    },
    async get(key): Promise<StoredObject | undefined> {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        // In Node the SDK hands over the HTTP response itself: the bytes are read as the caller reads.
        if (!(out.Body instanceof Readable)) throw new Error(`S3 GetObject ${key}: the body is not a Node stream`);
        return {
          body: out.Body,
          size: Number(out.ContentLength ?? 0),
          contentType: out.ContentType ?? 'application/octet-stream',
          metadata: out.Metadata ?? {},
        };
      } catch (err) {
        if (notFound(err)) return undefined;
        throw err;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async exists(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return true;
      } catch (err) {
        if (notFound(err)) return false;
        throw err;
      }
    },
  };
}
