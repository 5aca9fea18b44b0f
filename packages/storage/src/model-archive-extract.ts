import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw } from 'node:zlib';
import { AppError } from '@nvcf/protocol';
import { Unzip, type UnzipDecoder, type UnzipDecoderConstructor, type UnzipFile } from 'fflate';
import { placeEntry, unsafeEntryName, versionOfModelPath } from './model-archive-paths.ts';

export interface ModelArchiveLimits {
  /** Bytes the extracted entries may add up to. */
  maxBytes: number;
  /** Largest inflated/compressed ratio of an entry once it has inflated past 1 MiB. */
  maxRatio: number;
}

export interface ExtractedModelArchive {
  /** The model directory: `dest` itself, or the archive's one top folder inside it. */
  dir: string;
  /** Files written under `dir`, relative to it, sorted. */
  files: string[];
  /** Version directories holding a `model.onnx`, oldest first. */
  versions: string[];
  /** Bytes written. */
  bytes: number;
}

/** Labels and configs are small; a larger `.txt` is not one of them. */
const TEXT_MAX_BYTES = 16 * 1024 * 1024;
/** Below this an entry may compress as well as it likes (a config of spaces, a small zero tensor). */
const RATIO_FLOOR_BYTES = 1024 * 1024;
const MAX_FILES = 10_000;
/** Files being written at once; past it the archive is read no further until one is done. */
const MAX_OPEN_FILES = 16;
const STORED = 0;
const DEFLATE = 8;
/** Methods other tools write (deflate64, bzip2, LZMA, zstd, xz, PPMd, AES): skippable, never extracted. */
const OTHER_METHODS = [9, 12, 14, 93, 95, 98, 99];
const EMPTY = new Uint8Array(0);
/** What writing `a/b` beside a file `a` (or `a` beside a directory `a/`) fails with. */
const PATH_CONFLICTS = ['ENOTDIR', 'EEXIST', 'EISDIR'];

/** Zip archives start with a local file header (`PK\x03\x04`); ONNX files never do. */
export const looksLikeZip = (head: Uint8Array) =>
  head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;

const refuse = (message: string) => new AppError('INVALID_ARGUMENT', message);

interface EntrySink {
  push(chunk: Uint8Array, final: boolean): void;
}
const SKIPPED: EntrySink = { push: () => {} };

/**
 * Extracts the parts of a zipped Triton model directory (see `model-archive-paths.ts`) from `source`
 * into `dest`, which it creates. Built for archives nobody checked:
 *
 * - streamed: the archive is read chunk by chunk and each entry written as it inflates, with
 *   backpressure, so neither the archive nor an entry is ever held whole in memory;
 * - off the event loop: fflate only parses the zip's headers; inflating runs in node:zlib on libuv's
 *   thread pool (fflate's own async inflater has no flow control and inflates small entries inline);
 * - bounded: the sizes in the headers are checked before anything inflates, and the bytes actually
 *   inflated are counted against `maxBytes`, the entry's declared size and `maxRatio` as they come,
 *   so a zip bomb is refused after about a megabyte, whatever its headers say;
 * - confined: a name that would leave `dest` (`../x`, `/x`, `C:x`) refuses the archive; names that
 *   are not part of a model directory are skipped.
 *
 * On failure `dest` is removed and the error is an AppError INVALID_ARGUMENT naming the problem (or
 * the I/O error, for a full disk). Files of a folder other than the chosen model directory may remain
 * in `dest`: move `dir` out and remove `dest` when done.
 *
 * @example
 * const archive = await extractModelArchive(object.body, stagingDir, { maxBytes: 2 ** 31, maxRatio: 200 });
 * await rename(archive.dir, join(repository, modelName));
 */
export async function extractModelArchive(
  source: Readable,
  dest: string,
  limits: ModelArchiveLimits,
): Promise<ExtractedModelArchive> {
  await mkdir(dest, { recursive: true });
  const run = createExtraction(dest, limits);
  const chunks = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      // A failing entry must not wait for a source that has stalled (or feeds a bomb slowly).
      const next = await Promise.race([chunks.next(), run.failed]);
      if (next.done) break;
      run.push(next.value, false);
      await run.settle();
    }
    run.push(EMPTY, true);
    return await run.finish();
  } catch (err) {
    source.destroy(); // also settles a read still waiting on it
    await run.abort(err);
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
}

function createExtraction(dest: string, limits: ModelArchiveLimits) {
  let failure: unknown;
  let total = 0;
  /** Wrapper folder ('' for the root) → paths written under it. */
  const written = new Map<string, string[]>();
  const seen = new Set<string>();
  const writing = new Set<Promise<void>>();
  const inputs = new Set<Writable>();
  /** The sink of the entry being started: fflate constructs the entry's decoder inside `file.start()`. */
  let handoff: EntrySink | undefined;

  let rejectFailed: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    rejectFailed = reject;
  });
  failed.catch(() => {}); // observed through `failure` when nobody races it
  const fail = (err: unknown) => {
    if (failure === undefined) {
      failure = err;
      rejectFailed(err);
    }
    for (const input of inputs) input.destroy();
  };

  const decoder = (compression: number): UnzipDecoderConstructor =>
    class implements UnzipDecoder {
      static compression = compression;
      ondata = () => {};
      private readonly sink = handoff ?? SKIPPED;
      constructor() {
        handoff = undefined;
      }
      push(chunk: Uint8Array, final: boolean) {
        this.sink.push(chunk, final);
      }
    };

  const unzip = new Unzip((file) => startEntry(file));
  for (const method of [STORED, DEFLATE, ...OTHER_METHODS]) unzip.register(decoder(method));

  function startEntry(file: UnzipFile): void {
    const unsafe = unsafeEntryName(file.name);
    if (unsafe) throw refuse(`archive path '${file.name}' is not allowed: it has ${unsafe}`);
    const place = placeEntry(file.name);
    const tooBigForText = place.kind === 'extract' && place.text && (file.originalSize ?? 0) > TEXT_MAX_BYTES;
    const known = file.compression === STORED || file.compression === DEFLATE;
    let sink = SKIPPED;
    if (place.kind === 'extract' && !tooBigForText) {
      if (!known) {
        throw refuse(
          `archive entry '${file.name}' uses compression method ${file.compression}; only stored and deflate are supported`,
        );
      }
      const key = `${place.wrapper}/${place.path}`;
      if (seen.has(key)) throw refuse(`archive entry '${file.name}' appears twice`);
      if (seen.size >= MAX_FILES) throw refuse(`archive holds more than ${MAX_FILES} model files`);
      seen.add(key);
      checkHeader(file);
      sink = openEntry(file, join(dest, place.wrapper, place.path), place.text);
      const paths = written.get(place.wrapper) ?? [];
      paths.push(place.path);
      written.set(place.wrapper, paths);
    } else if (!known && !OTHER_METHODS.includes(file.compression)) {
      throw refuse(`archive entry '${file.name}' uses unknown compression method ${file.compression}`);
    }
    handoff = sink;
    file.ondata = (err) => {
      if (err) fail(err);
    };
    file.start();
    // An entry whose header says 0 bytes gets no decoder: end its file here.
    if (handoff) handoff.push(EMPTY, true);
    handoff = undefined;
  }

  function checkHeader(file: UnzipFile): void {
    if (file.originalSize === undefined) return; // sizes follow the data (a data descriptor): counted as it inflates
    if (total + file.originalSize > limits.maxBytes)
      throw refuse(`archive unpacks to more than ${limits.maxBytes} bytes`);
    if (file.originalSize > RATIO_FLOOR_BYTES && file.originalSize > (file.size ?? 0) * limits.maxRatio) {
      throw refuse(
        `archive entry '${file.name}' declares ${file.originalSize} bytes from ${file.size} compressed, more than ${limits.maxRatio} times: refused as a zip bomb`,
      );
    }
  }

  function openEntry(file: UnzipFile, target: string, text: boolean): EntrySink {
    const inflater = file.compression === DEFLATE ? createInflateRaw() : undefined;
    const input = inflater ?? new PassThrough();
    let pushed = 0;
    let inflated = 0;
    // What zlib has consumed, not what it was handed: a chunk handed over is ~1000× its size once inflated.
    const compressed = () => inflater?.bytesWritten ?? pushed;
    const overLimit = (): Error | null => {
      if (total > limits.maxBytes) return refuse(`archive unpacks to more than ${limits.maxBytes} bytes`);
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
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        inflated += chunk.length;
        total += chunk.length;
        const err = overLimit();
        if (err) done(err);
        else done(null, chunk);
      },
    });
    inputs.add(input);
    // zlib can fail on the first chunks pushed below, before the pipeline is attached (it waits for the
    // directory): without a listener that error would be uncaught. Kept, it is the entry's failure.
    let early: unknown;
    input.on('error', (err) => {
      early ??= err;
    });
    const task = (async () => {
      await mkdir(dirname(target), { recursive: true });
      await pipeline(input, meter, createWriteStream(target, { flags: 'wx' }));
    })()
      .catch((caught: unknown) => {
        const err = early ?? caught;
        const code = String((err as { code?: unknown }).code);
        if (code.startsWith('Z_')) fail(refuse(`archive entry '${file.name}' is corrupt: ${(err as Error).message}`));
        else if (PATH_CONFLICTS.includes(code))
          fail(refuse(`archive entry '${file.name}' is both a file and a directory in the archive`));
        else fail(err);
      })
      .finally(() => {
        inputs.delete(input);
        writing.delete(task);
      });
    writing.add(task);
    return {
      push(chunk, final) {
        if (failure !== undefined || input.destroyed) return;
        pushed += chunk.length;
        if (chunk.length > 0) input.write(chunk);
        if (final) input.end();
      },
    };
  }

  return {
    /** Rejects with the first failure. */
    failed,
    push(chunk: Uint8Array, final: boolean): void {
      if (failure !== undefined) throw failure;
      try {
        unzip.push(chunk, final);
      } catch (err) {
        throw err instanceof AppError ? err : refuse(`not a valid zip archive: ${(err as Error).message}`);
      }
    },
    /** Waits until the entries being written can take more, or one failed. */
    async settle(): Promise<void> {
      for (const input of inputs) if (input.writableNeedDrain) await Promise.race([drainOrClose(input), failed]);
      while (failure === undefined && writing.size > MAX_OPEN_FILES) await Promise.race([...writing, failed]);
      if (failure !== undefined) throw failure;
    },
    async finish(): Promise<ExtractedModelArchive> {
      while (writing.size > 0) await Promise.all(writing);
      if (failure !== undefined) throw failure;
      return chooseModelDir(dest, written, total);
    },
    async abort(err: unknown): Promise<void> {
      fail(err);
      while (writing.size > 0) await Promise.allSettled(writing);
    },
  };
}

/** The archive's model directory: its root when that holds a version, else the one top folder that does. */
async function chooseModelDir(
  dest: string,
  written: Map<string, string[]>,
  bytes: number,
): Promise<ExtractedModelArchive> {
  const holdsModel = [...written].filter(([, paths]) => paths.some((p) => versionOfModelPath(p)));
  const wrappers = holdsModel.map(([w]) => w);
  if (wrappers.length === 0) {
    throw refuse('archive holds no <version>/model.onnx (Triton model directory layout)');
  }
  const wrapper = wrappers.includes('') ? '' : wrappers.length === 1 ? (wrappers[0] as string) : undefined;
  if (wrapper === undefined) throw refuse(`archive holds more than one model directory: ${wrappers.join(', ')}`);
  for (const [other, paths] of written) {
    if (other === wrapper) continue;
    if (other === '') await Promise.all(paths.map((p) => rm(join(dest, p), { force: true })));
    else await rm(join(dest, other), { recursive: true, force: true });
  }
  const files = [...(written.get(wrapper) ?? [])].sort();
  const versions = files
    .map(versionOfModelPath)
    .filter((v): v is string => v !== undefined)
    .sort((a, b) => Number(a) - Number(b));
  return { dir: join(dest, wrapper), files, versions, bytes };
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
