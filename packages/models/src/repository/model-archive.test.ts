import { AppError } from '@nvcf/protocol';
import AdmZip from 'adm-zip';
import { describe, expect, it } from 'vitest';
import { parseModelConfigText } from '../config/parse-model-config.ts';
import { buildSimpleModel, SIMPLE_CONFIG_PBTXT } from '../examples/simple.ts';
import { archiveFilesFor, isZipArchive, readModelArchive } from './model-archive.ts';

const zipOf = (files: Record<string, Buffer | string>) => {
  const zip = new AdmZip();
  for (const [path, data] of Object.entries(files)) zip.addFile(path, Buffer.from(data));
  return zip.toBuffer();
};
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
};

describe('model-repository archives', () => {
  it('reads a wrapped or bare model directory and lists its versions', () => {
    const model = Buffer.from(buildSimpleModel());
    const wrapped = zipOf({
      'simple/config.pbtxt': SIMPLE_CONFIG_PBTXT,
      'simple/1/model.onnx': model,
      'simple/3/model.onnx': model,
    });
    expect(isZipArchive(wrapped)).toBe(true);
    const a = readModelArchive(wrapped, { maxBytes: 1 << 20 });
    expect(a.versions).toEqual(['1', '3']);
    expect([...a.files.keys()].sort()).toEqual(['1/model.onnx', '3/model.onnx', 'config.pbtxt']);
    const bare = readModelArchive(zipOf({ '2/model.onnx': model }), { maxBytes: 1 << 20 });
    expect(bare.versions).toEqual(['2']);
    const renamed = archiveFilesFor(a, 'fv-x');
    expect(parseModelConfigText(renamed.get('config.pbtxt')?.toString() ?? '').name).toBe('fv-x');
  });

  it('refuses escaping paths, missing models, bad configs, oversized contents and non-zips', () => {
    const model = Buffer.from(buildSimpleModel());
    // adm-zip already normalises '..' away when writing; names outside the safe alphabet are refused here.
    const odd = zipOf({ 'm/1/model.onnx': model, 'm/x y;rm': 'a' });
    expect(codeOf(() => readModelArchive(odd, { maxBytes: 1 << 20 }))).toMatch(/not allowed/);
    expect(codeOf(() => readModelArchive(zipOf({ 'm/labels.txt': 'a' }), { maxBytes: 1 << 20 }))).toMatch(
      /no <version>\/model.onnx/,
    );
    expect(
      codeOf(() =>
        readModelArchive(zipOf({ 'config.pbtxt': 'max_batch_size: [', '1/model.onnx': model }), { maxBytes: 1 << 20 }),
      ),
    ).toMatch(/config.pbtxt/);
    expect(codeOf(() => readModelArchive(zipOf({ '1/model.onnx': Buffer.alloc(4096) }), { maxBytes: 1000 }))).toMatch(
      /more than 1000/,
    );
    expect(codeOf(() => readModelArchive(Buffer.from('nope'), { maxBytes: 1000 }))).toMatch(/^INVALID_ARGUMENT/);
    expect(isZipArchive(Buffer.from('nope'))).toBe(false);
  });
});
