import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { buildZip, zipFile, zipZeros } from '@nvcf/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractModelArchive } from './model-archive-extract.ts';

const limits = { maxBytes: 64 << 20, maxRatio: 200 };
const onnx = Buffer.from('not really onnx, but bytes the extractor copies as they are');
let work: string;
let dest: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'nvcf-extract-'));
  dest = join(work, 'staging');
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Every file under `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );
/** The archive in 64 KiB chunks, as a file or object stream hands it over. */
const chunked = (bytes: Buffer) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536)),
  );
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'extracted',
    (err: { code?: string; message: string }) => `${err.code}: ${err.message}`,
  );

describe('extractModelArchive', () => {
  it('extracts the model directory (from its wrapping folder) and skips everything else', async () => {
    const zip = buildZip([
      zipFile('classifier/config.pbtxt', 'name: "classifier"\nplatform: "onnxruntime_onnx"\n'),
      zipFile('classifier/labels.txt', 'cat\ndog\n'),
      zipFile('classifier/1/model.onnx', onnx),
      zipFile('classifier/2/model.onnx', onnx, 0),
      zipFile('classifier/2/weights.data', Buffer.alloc(3000, 7)),
      zipFile('classifier/README.md', '# notes'),
      zipFile('classifier/scripts/convert.py', 'print(1)'),
      zipFile('__MACOSX/classifier/._config.pbtxt', 'resource fork'),
      zipFile('classifier/1/.DS_Store', 'finder'),
      zipFile('classifier/', ''),
    ]);
    const out = await extractModelArchive(chunked(zip), dest, limits);
    expect(out.dir).toBe(join(dest, 'classifier'));
    expect(out.versions).toEqual(['1', '2']);
    expect(out.files).toEqual(['1/model.onnx', '2/model.onnx', '2/weights.data', 'config.pbtxt', 'labels.txt']);
    expect(await tree(dest)).toEqual(out.files.map((f) => `classifier/${f}`));
    expect(await readFile(join(out.dir, '2/weights.data'))).toEqual(Buffer.alloc(3000, 7));
    expect(await readFile(join(out.dir, 'labels.txt'), 'utf8')).toBe('cat\ndog\n');
  });

  it('reads entries whose sizes follow the data (data descriptors) and empty files', async () => {
    const zip = buildZip([
      { ...zipFile('1/model.onnx', Buffer.alloc(200_000, 3)), descriptor: true },
      { ...zipFile('labels.txt', ''), descriptor: true },
      zipFile('config.pbtxt', ''),
    ]);
    const out = await extractModelArchive(chunked(zip), dest, limits);
    expect(out).toMatchObject({ dir: dest, versions: ['1'], bytes: 200_000 });
    expect(await tree(dest)).toEqual(['1/model.onnx', 'config.pbtxt', 'labels.txt']);
    expect(await readFile(join(dest, '1/model.onnx'))).toEqual(Buffer.alloc(200_000, 3));
  });

  it('refuses a zip bomb by its declared ratio before inflating it', async () => {
    const zip = buildZip([zipFile('config.pbtxt', ''), zipZeros('1/model.onnx', 900)]);
    expect(zip.length).toBeLessThan(1 << 20);
    expect(await refusal(extractModelArchive(chunked(zip), dest, { maxBytes: 4 * 2 ** 30, maxRatio: 200 }))).toMatch(
      /^INVALID_ARGUMENT: archive entry '1\/model.onnx' declares 943718400 bytes .* more than 200 times: refused as a zip bomb$/,
    );
    expect(await exists(dest)).toBe(false);
  });

  it('refuses a bomb that hides its sizes after about a megabyte, before the archive has even been read to the end', async () => {
    const zip = buildZip([{ ...zipZeros('1/model.onnx', 900), descriptor: true }]);
    // The source never ends: the refusal cannot come from reading the whole archive first.
    const source = new PassThrough();
    source.write(zip.subarray(0, zip.length - 1000));
    const result = refusal(extractModelArchive(source, dest, { maxBytes: 4 * 2 ** 30, maxRatio: 200 }));
    expect(await result).toMatch(/inflates to more than 200 times its compressed size: refused as a zip bomb$/);
    expect(source.destroyed).toBe(true);
    expect(await exists(dest)).toBe(false);
  });

  it('refuses an archive past the total size as it inflates, whatever the headers say', async () => {
    const loose = { maxBytes: 8 << 20, maxRatio: 1_000_000 };
    const declared = buildZip([zipZeros('1/model.onnx', 16)]);
    expect(await refusal(extractModelArchive(chunked(declared), dest, loose))).toBe(
      'INVALID_ARGUMENT: archive unpacks to more than 8388608 bytes',
    );
    const hidden = buildZip([{ ...zipZeros('1/model.onnx', 16), descriptor: true }]);
    expect(await refusal(extractModelArchive(chunked(hidden), dest, loose))).toBe(
      'INVALID_ARGUMENT: archive unpacks to more than 8388608 bytes',
    );
    // Headers that understate the size are caught by the bytes themselves.
    const lying = buildZip([{ ...zipZeros('1/model.onnx', 4), size: 1000 }]);
    expect(await refusal(extractModelArchive(chunked(lying), dest, loose))).toBe(
      "INVALID_ARGUMENT: archive entry '1/model.onnx' unpacks to more than the 1000 bytes its header declares",
    );
    expect(await exists(dest)).toBe(false);
  });

  it('refuses names that leave the directory, writing nothing anywhere', async () => {
    for (const name of ['../x', 'model/../../x', '/etc/passwd', 'C:/x', '..\\x', '1/../../model.onnx']) {
      const zip = buildZip([zipFile('1/model.onnx', onnx), zipFile(name, 'escape')]);
      expect(await refusal(extractModelArchive(chunked(zip), dest, limits))).toMatch(
        /^INVALID_ARGUMENT: archive path '.*' is not allowed: it has (a '\.\.' segment|an absolute path)$/,
      );
      expect(await tree(work)).toEqual([]);
    }
  });

  it('refuses archives that are not one model directory, duplicates, unknown methods and corrupt data', async () => {
    const cases: [Buffer, RegExp][] = [
      [buildZip([zipFile('labels.txt', 'a')]), /no <version>\/model\.onnx/],
      [
        buildZip([zipFile('a/1/model.onnx', onnx), zipFile('b/1/model.onnx', onnx)]),
        /more than one model directory: a, b/,
      ],
      [buildZip([zipFile('1/model.onnx', onnx), zipFile('1/model.onnx', onnx)]), /'1\/model.onnx' appears twice/],
      [
        buildZip([{ ...zipFile('1/model.onnx', onnx, 0), method: 12 }]),
        /compression method 12; only stored and deflate/,
      ],
      [
        buildZip([{ ...zipFile('1/model.onnx', onnx), data: Buffer.from('garbage that is not deflate') }]),
        /is corrupt/,
      ],
      [
        buildZip([zipFile('1/model.onnx', onnx), zipFile('1/w', 'a'), zipFile('1/w/x', 'b')]),
        /both a file and a directory/,
      ],
      [Buffer.from('definitely not a zip'), /no <version>\/model\.onnx/],
      [buildZip([zipFile('1/model.onnx', onnx)]).subarray(0, 60), /not a valid zip archive/],
    ];
    for (const [zip, message] of cases) {
      expect(await refusal(extractModelArchive(chunked(zip), dest, limits))).toMatch(message);
      expect(await exists(dest)).toBe(false);
    }
  });

  it('lets small files compress as well as they like and skips a large .txt that is no label file', async () => {
    const zip = buildZip([
      zipFile('config.pbtxt', ' '.repeat(200_000)),
      zipFile('1/model.onnx', Buffer.alloc(500_000)),
      { ...zipZeros('corpus.txt', 17), descriptor: false },
    ]);
    const out = await extractModelArchive(chunked(zip), dest, { maxBytes: 64 << 20, maxRatio: 1_000_000 });
    expect(out.files).toEqual(['1/model.onnx', 'config.pbtxt']);
  });
});
