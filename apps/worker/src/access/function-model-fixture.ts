/**
 * Test helper (only *.int.test.ts import it): puts a copy of the example `simple` model into a repository
 * under an NVCF function-model name, as the worker names the model it loads for a deployed function version.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { functionModelName } from '@nvcf/storage';

export const FUNCTION_VERSION_ID = '0b7c5e2a-3f41-4d8e-9c61-7a2f9e4b1d30';
export const FUNCTION_MODEL = functionModelName(FUNCTION_VERSION_ID);

export async function addFunctionModel(dir: string): Promise<void> {
  const target = join(dir, FUNCTION_MODEL);
  await cp(join(dir, 'simple'), target, { recursive: true });
  const config = await readFile(join(target, 'config.pbtxt'), 'utf8');
  await writeFile(join(target, 'config.pbtxt'), config.replace('name: "simple"', `name: "${FUNCTION_MODEL}"`));
}
