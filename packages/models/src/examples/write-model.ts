import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes a file through a temporary sibling and a rename, so a server scanning or loading the repository at the
 * same moment sees either the old file or the new one, never a half-written model.
 */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  // Unique per call: two writers of the same file must not share a temporary.
  const tmp = `${path}.${randomUUID()}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** Writes `<repositoryDir>/<name>/<version>/model.onnx` (Triton layout) and returns the model directory. */
export async function writeModelVersion(
  repositoryDir: string,
  name: string,
  model: Uint8Array,
  version = '1',
): Promise<string> {
  const modelDir = join(repositoryDir, name);
  await mkdir(join(modelDir, version), { recursive: true });
  await writeFileAtomic(join(modelDir, version, 'model.onnx'), model);
  return modelDir;
}
