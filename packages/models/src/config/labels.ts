import { readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { ModelConfigError } from './proto-schema.ts';

/**
 * Reads an output's `label_filename` (relative to the model directory): line i labels class index i for the
 * classification extension. Handles `\n` and `\r\n`; one trailing empty line (a final newline) is not a label.
 *
 * @throws ModelConfigError if the file is missing or escapes the model directory.
 * @example
 * await readLabels('/models/densenet_onnx', 'densenet_labels.txt'); // ['tench', 'goldfish', ...]
 */
export async function readLabels(modelDir: string, labelFilename: string): Promise<string[]> {
  const path = resolve(modelDir, labelFilename);
  // A config must not reach outside its model directory (`../../etc/passwd`), mirroring repository confinement.
  const rel = relative(resolve(modelDir), path);
  if (isAbsolute(labelFilename) || rel.startsWith('..') || isAbsolute(rel)) {
    throw new ModelConfigError(`label file '${labelFilename}' must be inside the model directory`);
  }
  let text: string;
  try {
    text = await readFile(join(modelDir, labelFilename), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelConfigError(
      `label file '${labelFilename}' cannot be read: ${code === 'ENOENT' ? 'it does not exist' : (err as Error).message}`,
    );
  }
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
