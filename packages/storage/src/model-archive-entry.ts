import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PassThrough, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw } from 'node:zlib';
import { AppError } from '@nvcf/protocol';
import type { UnzipFile } from 'fflate';
import type { ModelArchiveLimits } from './model-archive-extract.ts';

/** Labels and configs are small; a larger `.txt` is not one of them. */
export const TEXT_MAX_BYTES = 16 * 1024 * 1024;
/** Below this an entry may compress as well as it likes (a config of spaces, a small zero tensor). */
export const RATIO_FLOOR_BYTES = 1024 * 1024;
/** Files being written at once; past it the archive is read no further until one is done. */
const MAX_OPEN_FILES = 16;
export const DEFLATE = 8;
/** What writing `a/b` beside a file `a` (or `a` beside a directory `a/`) fails with. */
const PATH_CONFLICTS = ['ENOTDIR', 'EEXIST', 'EISDIR'];

export const refuse = (message: string) => new AppError('INVALID_ARGUMENT', message);

export interface EntrySink {
  push(chunk: Uint8Array, final: boolean): void;
}
export const SKIPPED: EntrySink = { push: () => {} };

/**
 * What the entries of one extraction share: its limits, the bytes written so far, the entries still
 * being written and the first failure, which stops them all.
 */
export class EntryWriters {
  readonly limits: ModelArchiveLimits;
  /** Rejects with the first failure. */
  readonly failed: Promise<never>;
  total = 0;
  #failure: unknown;
  #rejectFailed: (err: unknown) => void = () => {};
  readonly #writing = new Set<Promise<void>>();
  readonly #inputs = new Set<Writable>();

  constructor(limits: ModelArchiveLimits) {
    this.limits = limits;
    this.failed = new Promise<never>((_, reject) => {
      this.#rejectFailed = reject;
    });
    this.failed.catch(() => {}); // observed through `failure` when nobody races it
  }

  get failure(): unknown {
    return this.#failure;
  }

  fail(err: unknown): void {
    if (this.#failure === undefined) {
      this.#failure = err;
      this.#rejectFailed(err);
    }
    for (const input of this.#inputs) input.destroy();
  }

  /** Tracks an entry's input stream and the work writing it, until that is done. */
  track(input: Writable, work: Promise<void>): void {
    this.#inputs.add(input);
    const task = work.finally(() => {
      this.#inputs.delete(input);
      this.#writing.delete(task);
    });
    this.#writing.add(task);
  }

  /** Waits until the entries being written can take more, or one failed. */
  async settle(): Promise<void> {
    for (const input of this.#inputs)
      if (input.writableNeedDrain) await Promise.race([drainOrClose(input), this.failed]);
    while (this.#failure === undefined && this.#writing.size > MAX_OPEN_FILES)
      await Promise.race([...this.#writing, this.failed]);
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Waits for every entry to be written; rejects with the first failure. */
  async finish(): Promise<void> {
    while (this.#writing.size > 0) await Promise.all(this.#writing);
    if (this.#failure !== undefined) throw this.#failure;
  }

  async abort(err: unknown): Promise<void> {
    this.fail(err);
    while (this.#writing.size > 0) await Promise.allSettled(this.#writing);
  }
}

/** Writes one entry to `target` as it inflates, counting its bytes against the extraction's limits. */
export function openEntry(writers: EntryWriters, file: UnzipFile, target: string, text: boolean): EntrySink {
  const inflater = file.compression === DEFLATE ? createInflateRaw() : undefined;
  const input = inflater ?? new PassThrough();
  let pushed = 0;
  // What zlib has consumed, not what it was handed: a chunk handed over is ~1000× its size once inflated.
  const meter = createMeter(writers, file, text, () => inflater?.bytesWritten ?? pushed);
  // zlib can fail on the first chunks pushed below, before the pipeline is attached (it waits for the
  // directory): without a listener that error would be uncaught. Kept, it is the entry's failure.
  let early: unknown;
  input.on('error', (err) => {
    early ??= err;
  });
  const task = (async () => {
    await mkdir(dirname(target), { recursive: true });
    await pipeline(input, meter, createWriteStream(target, { flags: 'wx' }));
  })().catch((caught: unknown) => writers.fail(entryFailure(file, early ?? caught)));
  writers.track(input, task);
  return {
    push(chunk, final) {
      if (writers.failure !== undefined || input.destroyed) return;
      pushed += chunk.length;
      if (chunk.length > 0) input.write(chunk);
      if (final) input.end();
    },
  };
}

/** Counts the bytes an entry inflates to, failing the stream as soon as they pass a limit. */
function createMeter(writers: EntryWriters, file: UnzipFile, text: boolean, compressed: () => number): Transform {
  const { limits } = writers;
  let inflated = 0;
  const overLimit = (): Error | null => {
    if (writers.total > limits.maxBytes) return refuse(`archive unpacks to more than ${limits.maxBytes} bytes`);
    if (file.originalSize !== undefined && inflated > file.originalSize) {
      return refuse(
        `archive entry '${file.name}' unpacks to more than the ${file.originalSize} bytes its header declares`,
      );
    }
    if (text && inflated > TEXT_MAX_BYTES)
      return refuse(`archive file '${file.name}' is larger than ${TEXT_MAX_BYTES} bytes`);
    if (inflated > RATIO_FLOOR_BYTES && inflated > compressed() * limits.maxRatio) {
      return refuse(
        `archive entry '${file.name}' inflates to more than ${limits.maxRatio} times its compressed size: refused as a zip bomb`,
      );
    }
    return null;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      writers.total += chunk.length;
      const err = overLimit();
      if (err) done(err);
      else done(null, chunk);
    },
  });
}

function entryFailure(file: UnzipFile, err: unknown): unknown {
  const code = String((err as { code?: unknown }).code);
  if (code.startsWith('Z_')) return refuse(`archive entry '${file.name}' is corrupt: ${(err as Error).message}`);
  if (PATH_CONFLICTS.includes(code))
    return refuse(`archive entry '${file.name}' is both a file and a directory in the archive`);
  return err;
}

function drainOrClose(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
