import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type BuiltInBackend, isBuiltInBackend } from '../config/auto-complete.ts';
import { parseModelConfigText } from '../config/parse-model-config.ts';

/** One servable model version found on disk. */
export interface ModelVersionEntry {
  name: string;
  /** Decimal digits, no leading zero (Triton's rule), kept as a string so huge numbers stay exact. */
  version: string;
  /** `<repo>/<name>/<version>/model.onnx` */
  modelPath: string;
  /** `<repo>/<name>` (where `config.pbtxt` lives, if any). */
  modelDir: string;
  /** The built-in backend the model's config names (`identity`, `repeat`): its version directories hold no model file. */
  backend?: BuiltInBackend;
}

export interface ScanOptions {
  /** Told about each directory that was passed over and why, so the caller can log it. */
  onSkipped?: (skipped: { path: string; reason: string }) => void;
}

// A model name becomes one URL path segment (/v2/models/<name>) and a metric label: keep it to safe characters.
const MODEL_NAME = /^[A-Za-z0-9_.-]+$/;
// Triton ignores version directories that are not numeric or that start with '0'.
const VERSION = /^[1-9][0-9]*$/;
const MODEL_FILE = 'model.onnx';

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Numeric order without parsing: with no leading zeros, a shorter digit string is a smaller number. */
function compareVersions(a: string, b: string): number {
  return a.length - b.length || compareText(a, b);
}

/** By name (code-unit order, the same on every machine), then numeric version. */
export function compareModelVersions(
  a: { name: string; version: string },
  b: { name: string; version: string },
): number {
  return compareText(a.name, b.name) || compareVersions(a.version, b.version);
}

/** Directories, following symlinks (repositories are often assembled from links). */
async function isDirectory(parent: string, entry: Dirent): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  return (await stat(join(parent, entry.name)).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

/** The built-in backend the model's config.pbtxt names, if any (an unreadable config names none). */
async function builtInBackendOf(modelDir: string): Promise<BuiltInBackend | undefined> {
  const text = await readFile(join(modelDir, 'config.pbtxt'), 'utf8').catch(() => undefined);
  if (text === undefined || !text.includes('backend')) return undefined;
  try {
    const { backend } = parseModelConfigText(text);
    return isBuiltInBackend(backend) ? backend : undefined;
  } catch {
    return undefined;
  }
}

async function scanModel(modelDir: string, name: string, opts: ScanOptions): Promise<ModelVersionEntry[]> {
  const found: ModelVersionEntry[] = [];
  const backend = await builtInBackendOf(modelDir);
  for (const entry of await readdir(modelDir, { withFileTypes: true })) {
    if (!VERSION.test(entry.name) || !(await isDirectory(modelDir, entry))) continue;
    const modelPath = join(modelDir, entry.name, MODEL_FILE);
    if (backend) found.push({ name, version: entry.name, modelPath, modelDir, backend });
    else if (await isFile(modelPath)) found.push({ name, version: entry.name, modelPath, modelDir });
    else opts.onSkipped?.({ path: join(modelDir, entry.name), reason: `no ${MODEL_FILE}` });
  }
  return found.sort((a, b) => compareVersions(a.version, b.version));
}

/**
 * Lists every `<repo>/<model>/<version>/model.onnx` in Triton's layout, sorted by model name, then numeric version.
 * Version directories must be all digits without a leading zero; models with no valid version are left out.
 *
 * @example
 * const entries = await scanModelRepository('./model-repository');
 * // [{ name: 'classifier', version: '1', ... }, { name: 'simple', version: '1', ... }]
 */
export async function scanModelRepository(dir: string, opts: ScanOptions = {}): Promise<ModelVersionEntry[]> {
  const info = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    throw new Error(
      `model repository '${dir}' cannot be read: ${err.code === 'ENOENT' ? 'it does not exist' : err.message}`,
    );
  });
  if (!info.isDirectory()) throw new Error(`model repository '${dir}' is not a directory`);

  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => compareText(a.name, b.name));
  const result: ModelVersionEntry[] = [];
  for (const entry of entries) {
    if (!(await isDirectory(dir, entry))) continue;
    const name = entry.name;
    const modelDir = join(dir, name);
    if (!MODEL_NAME.test(name)) {
      opts.onSkipped?.({ path: modelDir, reason: 'model name has characters outside [A-Za-z0-9_.-]' });
      continue;
    }
    const versions = await scanModel(modelDir, name, opts);
    if (versions.length === 0) opts.onSkipped?.({ path: modelDir, reason: 'no valid version directory' });
    result.push(...versions);
  }
  return result;
}
