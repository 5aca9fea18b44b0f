import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { AppError } from '@nvcf/protocol';
import type { ObjectStore, StoredObject } from './object-store.ts';

export interface S3StoreOptions {
  /** e.g. `http://minio:9000`; absent: AWS itself. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Largest object accepted by `put` (PAYLOAD_TOO_LARGE above). */
  maxBytes?: number;
}

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/** Reads a stream into memory, refusing it as soon as it passes `max` bytes. */
async function collect(body: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > max) {
      body.destroy();
      throw new AppError('PAYLOAD_TOO_LARGE', `object exceeds ${max} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Objects in an S3-compatible service (MinIO, AWS S3): what several machines share, where the local
 * directory store only serves one. The bucket is created when missing. A put is one PutObject (S3 makes
 * it atomic); bodies are bounded by `maxBytes` before they are sent.
 */
export async function createS3Store(opts: S3StoreOptions): Promise<ObjectStore> {
  const client = new S3Client({
    region: opts.region,
    ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
  });
  const Bucket = opts.bucket;
  try {
    await client.send(new HeadBucketCommand({ Bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket })).catch((err: unknown) => {
      if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw err;
    });
  }
  const limit = opts.maxBytes ?? Number.MAX_SAFE_INTEGER;
  return {
    async put(key, body, meta, putOpts) {
      const max = putOpts?.maxBytes ?? limit;
      const bytes = Buffer.isBuffer(body) ? body : await collect(body, max);
      if (bytes.length > max) throw new AppError('PAYLOAD_TOO_LARGE', `object exceeds ${max} bytes`);
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: bytes,
          ContentType: meta.contentType,
          Metadata: meta.metadata ?? {},
        }),
      );
      return { size: bytes.length };
    },
    async get(key): Promise<StoredObject | undefined> {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return {
          body: out.Body as Readable,
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
