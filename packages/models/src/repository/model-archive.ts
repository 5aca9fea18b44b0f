import { AppError } from '@nvcf/protocol';
import AdmZip from 'adm-zip';
import { parseModelConfigText } from '../config/parse-model-config.ts';
import { modelConfigToText } from '../config/print-model-config.ts';

export interface ModelArchive {
  /** Files of one model directory, paths relative to it (`config.pbtxt`, `1/model.onnx`, `labels.txt`). */
  files: Map<string, Buffer>;
  /** Numeric version directories holding a `model.onnx`, oldest first. */
  versions: string[];
}

const VERSION_MODEL = /^([1-9]\d*)\/model\.onnx$/;
const SAFE_PATH = /^(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9._/-]+$/;

/** Zip files start with a local file header. */
export const isZipArchive = (bytes: Uint8Array) =>
  bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;

/**
 * Reads a zipped model directory in Triton's layout (Triton model repository): either its files
 * at the root or under one top-level directory. Sizes are checked from the headers before anything is
 * inflated (a zip bomb is refused), and no path may leave the model directory.
 *
 * @throws AppError INVALID_ARGUMENT naming what is wrong.
 */
export function readModelArchive(bytes: Uint8Array, opts: { maxBytes: number }): ModelArchive {
  let zip: AdmZip;
  try {
    zip = new AdmZip(Buffer.from(bytes));
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `not a zip archive: ${(err as Error).message}`);
  }
  const entries = zip.getEntries().filter((e) => !e.isDirectory);
  const total = entries.reduce((n, e) => n + e.header.size, 0);
  if (total > opts.maxBytes)
    throw new AppError('INVALID_ARGUMENT', `archive unpacks to more than ${opts.maxBytes} bytes`);
  const names = entries.map((e) => e.entryName.replace(/\\/g, '/'));
  for (const n of names) {
    if (n.startsWith('/') || !SAFE_PATH.test(n))
      throw new AppError('INVALID_ARGUMENT', `archive path '${n}' is not allowed`);
  }
  // One top-level directory wrapping everything is the model directory itself.
  const tops = new Set(names.map((n) => n.split('/')[0]));
  const prefix =
    tops.size === 1 && names.every((n) => n.includes('/')) && !/^[1-9]\d*$/.test([...tops][0] ?? '')
      ? `${[...tops][0]}/`
      : '';
  const files = new Map<string, Buffer>();
  entries.forEach((e, i) => {
    files.set((names[i] as string).slice(prefix.length), e.getData());
  });
  const versions = [...files.keys()]
    .map((p) => VERSION_MODEL.exec(p)?.[1])
    .filter((v): v is string => v !== undefined)
    .sort((a, b) => Number(a) - Number(b));
  if (versions.length === 0) {
    throw new AppError('INVALID_ARGUMENT', 'archive holds no <version>/model.onnx (Triton model directory layout)');
  }
  const config = files.get('config.pbtxt');
  if (config) {
    try {
      parseModelConfigText(config.toString('utf8'), 'config.pbtxt');
    } catch (err) {
      throw new AppError('INVALID_ARGUMENT', `archive config.pbtxt: ${(err as Error).message}`);
    }
  }
  return { files, versions };
}

/**
 * The archive's files as they go into a repository under another directory name: a config's `name`,
 * which Triton requires to equal the directory, is rewritten.
 */
export function archiveFilesFor(archive: ModelArchive, modelName: string): Map<string, Buffer> {
  const out = new Map(archive.files);
  const config = out.get('config.pbtxt');
  if (config) {
    const parsed = parseModelConfigText(config.toString('utf8'), 'config.pbtxt');
    out.set('config.pbtxt', Buffer.from(modelConfigToText({ ...parsed, name: modelName })));
  }
  return out;
}
