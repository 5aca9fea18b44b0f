import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '@nvcf/protocol';
import { Unzip, type UnzipDecoder, type UnzipDecoderConstructor, type UnzipFile } from 'fflate';
import {
  DEFLATE,
  type EntrySink,
  EntryWriters,
  openEntry,
  RATIO_FLOOR_BYTES,
  refuse,
  SKIPPED,
  TEXT_MAX_BYTES,
} from './model-archive-entry.ts';
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

const MAX_FILES = 10_000;
const STORED = 0;
/** Methods other tools write (deflate64, bzip2, LZMA, zstd, xz, PPMd, AES): skippable, never extracted. */
const OTHER_METHODS = [9, 12, 14, 93, 95, 98, 99];
const EMPTY = new Uint8Array(0);

/** Zip archives start with a local file header (`PK\x03\x04`); ONNX files never do. */
export const looksLikeZip = (head: Uint8Array) =>
  head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;

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
  const run = new Extraction(dest, limits);
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

/**
 * One extraction: feeds the archive to fflate, which only parses headers, and decides for each entry
 * whether it is written (and where), skipped or refuses the archive.
 */
class Extraction {
  readonly #dest: string;
  readonly #writers: EntryWriters;
  readonly #unzip: Unzip;
  /** Wrapper folder ('' for the root) → paths written under it. */
  readonly #written = new Map<string, string[]>();
  readonly #seen = new Set<string>();
  /** The sink of the entry being started: fflate constructs the entry's decoder inside `file.start()`. */
  #handoff: EntrySink | undefined;

  constructor(dest: string, limits: ModelArchiveLimits) {
    this.#dest = dest;
    this.#writers = new EntryWriters(limits);
    this.#unzip = new Unzip((file) => this.#startEntry(file));
    const takeHandoff = () => {
      const sink = this.#handoff ?? SKIPPED;
      this.#handoff = undefined;
      return sink;
    };
    for (const method of [STORED, DEFLATE, ...OTHER_METHODS]) this.#unzip.register(decoder(method, takeHandoff));
  }

  /** Rejects with the first failure. */
  get failed(): Promise<never> {
    return this.#writers.failed;
  }

  push(chunk: Uint8Array, final: boolean): void {
    if (this.#writers.failure !== undefined) throw this.#writers.failure;
    try {
      this.#unzip.push(chunk, final);
    } catch (err) {
      throw err instanceof AppError ? err : refuse(`not a valid zip archive: ${(err as Error).message}`);
    }
  }

  /** Waits until the entries being written can take more, or one failed. */
  settle(): Promise<void> {
    return this.#writers.settle();
  }

  async finish(): Promise<ExtractedModelArchive> {
    await this.#writers.finish();
    return chooseModelDir(this.#dest, this.#written, this.#writers.total);
  }

  abort(err: unknown): Promise<void> {
    return this.#writers.abort(err);
  }

  #startEntry(file: UnzipFile): void {
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
      sink = this.#extractEntry(file, place.wrapper, place.path, place.text);
    } else if (!known && !OTHER_METHODS.includes(file.compression)) {
      throw refuse(`archive entry '${file.name}' uses unknown compression method ${file.compression}`);
    }
    this.#handoff = sink;
    file.ondata = (err) => {
      if (err) this.#writers.fail(err);
    };
    file.start();
    // An entry whose header says 0 bytes gets no decoder: end its file here.
    if (this.#handoff) this.#handoff.push(EMPTY, true);
    this.#handoff = undefined;
  }

  #extractEntry(file: UnzipFile, wrapper: string, path: string, text: boolean): EntrySink {
    const key = `${wrapper}/${path}`;
    if (this.#seen.has(key)) throw refuse(`archive entry '${file.name}' appears twice`);
    if (this.#seen.size >= MAX_FILES) throw refuse(`archive holds more than ${MAX_FILES} model files`);
    this.#seen.add(key);
    this.#checkHeader(file);
    const sink = openEntry(this.#writers, file, join(this.#dest, wrapper, path), text);
    const paths = this.#written.get(wrapper) ?? [];
    paths.push(path);
    this.#written.set(wrapper, paths);
    return sink;
  }

  #checkHeader(file: UnzipFile): void {
    if (file.originalSize === undefined) return; // sizes follow the data (a data descriptor): counted as it inflates
    const { limits, total } = this.#writers;
    if (total + file.originalSize > limits.maxBytes)
      throw refuse(`archive unpacks to more than ${limits.maxBytes} bytes`);
    if (file.originalSize > RATIO_FLOOR_BYTES && file.originalSize > (file.size ?? 0) * limits.maxRatio) {
      throw refuse(
        `archive entry '${file.name}' declares ${file.originalSize} bytes from ${file.size} compressed, more than ${limits.maxRatio} times: refused as a zip bomb`,
      );
    }
  }
}

/** A decoder that hands what fflate pushes to the sink of the entry being started when it was made. */
const decoder = (compression: number, takeHandoff: () => EntrySink): UnzipDecoderConstructor =>
  class implements UnzipDecoder {
    static compression = compression;
    ondata = () => {};
    private readonly sink = takeHandoff();
    push(chunk: Uint8Array, final: boolean) {
      this.sink.push(chunk, final);
    }
  };

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
