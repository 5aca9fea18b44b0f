import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@nvcf/protocol';
import type { ObjectMeta, ObjectStore, StoredObject } from './object-store.ts';

export interface LocalDirStoreOptions {
  /** Default byte limit of a `put` (PAYLOAD_TOO_LARGE past it); unlimited when absent. */
  maxBytes?: number;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;
const MAX_KEY_LENGTH = 1024;

/**
 * The segments of a valid object key. Segments may not start with a dot, which rules out `.` and `..`
 * (no key can leave the store's directory) and keeps the store's own dot-files (sidecars, temporaries)
 * out of every key's reach.
 *
 * @throws AppError INVALID_ARGUMENT
 */
export function objectKeySegments(key: string): string[] {
  const segments = key.split('/');
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !segments.every((s) => SEGMENT.test(s))) {
    throw new AppError('INVALID_ARGUMENT', `invalid object key '${key.slice(0, 64)}'`);
  }
  return segments;
}

const tooLarge = (max: number) => new AppError('PAYLOAD_TOO_LARGE', `object exceeds ${max} bytes`);

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code;
/** Errors meaning "no object under this key" (a directory on the way may be a file, or the key a directory). */
const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(codeOf(err) ?? '');

interface Sidecar {
  contentType: string;
  metadata: Record<string, string>;
}

function parseSidecar(text: string): Sidecar {
  const raw = JSON.parse(text) as Partial<Sidecar>;
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw.metadata ?? {})) if (typeof v === 'string') metadata[k] = v;
  return { contentType: typeof raw.contentType === 'string' ? raw.contentType : 'application/octet-stream', metadata };
}

/**
 * Objects as files under `dir`: `<dir>/<key>` holds the bytes, `<dir>/<key's folder>/.<name>.meta.json`
 * the content type and metadata. Writes go to a temporary dot-file that is renamed into place (atomic
 * on one filesystem), the sidecar first, so a reader never sees a partial object. A shared directory
 * (NFS, a volume) lets several processes on one machine, or several machines, use one store.
 *
 * While a put replaces an existing object, a concurrent get may pair the new sidecar with the old
 * bytes for an instant; the size it reports always matches the bytes it streams.
 */
export function createLocalDirStore(dir: string, opts: LocalDirStoreOptions = {}): ObjectStore {
  const root = resolve(dir);
  return {
    async put(key, body, meta: ObjectMeta, putOpts = {}) {
      const paths = objectPaths(root, key);
      return putObject(paths, body, meta, putOpts.maxBytes ?? opts.maxBytes ?? Number.POSITIVE_INFINITY);
    },
    async get(key) {
      return getObject(objectPaths(root, key));
    },
    async delete(key) {
      const { file, sidecar } = objectPaths(root, key);
      for (const path of [file, sidecar]) {
        try {
          await unlink(path);
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
      }
    },
    async exists(key) {
      const { file } = objectPaths(root, key);
      try {
        return (await stat(file)).isFile();
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
  };
}

interface ObjectPaths {
  folder: string;
  name: string;
  file: string;
  sidecar: string;
}

function objectPaths(root: string, key: string): ObjectPaths {
  const segments = objectKeySegments(key);
  const name = segments.at(-1)!;
  const folder = join(root, ...segments.slice(0, -1));
  const file = join(folder, name);
  // Belt and braces: the segment rule already keeps every path inside the root.
  if (!file.startsWith(root + sep)) throw new AppError('INVALID_ARGUMENT', `invalid object key '${key}'`);
  return { folder, name, file, sidecar: join(folder, `.${name}.meta.json`) };
}

async function putObject(
  { folder, name, file, sidecar }: ObjectPaths,
  body: Buffer | Readable,
  meta: ObjectMeta,
  limit: number,
): Promise<{ size: number }> {
  if (Buffer.isBuffer(body) && body.length > limit) throw tooLarge(limit);
  await mkdir(folder, { recursive: true });
  const tag = randomBytes(8).toString('hex');
  const tmpData = join(folder, `.${name}.${tag}.tmp`);
  const tmpMeta = join(folder, `.${name}.${tag}.meta.tmp`);
  try {
    let size = 0;
    if (Buffer.isBuffer(body)) {
      await writeFile(tmpData, body, { flush: true });
      size = body.length;
    } else {
      size = await streamInto(body, tmpData, limit);
    }
    const side: Sidecar = { contentType: meta.contentType, metadata: { ...meta.metadata } };
    await writeFile(tmpMeta, JSON.stringify(side), { flush: true });
    await rename(tmpMeta, sidecar);
    await rename(tmpData, file);
    return { size };
  } catch (err) {
    if (!Buffer.isBuffer(body) && !body.destroyed) body.destroy();
    await Promise.all([rm(tmpData, { force: true }), rm(tmpMeta, { force: true })]);
    throw err;
  }
}

async function streamInto(body: Readable, target: string, limit: number): Promise<number> {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) done(tooLarge(limit));
      else done(null, chunk);
    },
  });
  // On any failure pipeline destroys the source: an HTTP upload stops being read.
  await pipeline(body, counter, createWriteStream(target, { flush: true }));
  return size;
}

async function getObject({ file, sidecar }: ObjectPaths): Promise<StoredObject | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return undefined;
    }
    let side: Sidecar = { contentType: 'application/octet-stream', metadata: {} };
    try {
      side = parseSidecar(await readFile(sidecar, 'utf8'));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    // Files are only ever replaced by rename, never written in place: this handle reads exactly
    // `info.size` bytes. The stream owns the handle from here on (closed at the end or on destroy).
    return { body: handle.createReadStream(), size: info.size, ...side };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
