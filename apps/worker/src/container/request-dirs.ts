import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { assetObjectKey } from '@nvcf/control-store';
import type { ObjectStore } from '@nvcf/storage';

/** The file in the large-output dir that reports progress (NVCF worker: progress file); never an artefact. */
export const PROGRESS_FILE = 'progress';

export interface RequestDirs {
  assetDir: string;
  largeOutputDir: string;
  /** Every file the server left in the large-output dir (but `progress`), by path relative to it. */
  artefacts(): Promise<{ name: string; body: Buffer }[]>;
  remove(): Promise<void>;
}

/**
 * A request's two directories (NVCF worker: `/var/inf/inputAssets/<reqId>` and `/var/inf/response/<reqId>`),
 * under the worker's container work dir: the assets, downloaded before the call, one file per asset named by
 * its id, and an empty large-output dir the server may write (mode 0777, as NVCF makes it: a server may run
 * as another user). Both are removed after the request.
 */
export async function openRequestDirs(
  workDir: string,
  requestId: string,
  assetIds: readonly string[],
  objects: ObjectStore,
): Promise<RequestDirs> {
  const root = join(workDir, requestId);
  const assetDir = join(root, 'input-assets');
  const largeOutputDir = join(root, 'response');
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    await mkdir(assetDir, { recursive: true });
    await mkdir(largeOutputDir, { recursive: true });
    await chmod(largeOutputDir, 0o777);
    for (const id of assetIds) {
      const object = await objects.get(assetObjectKey(id));
      if (!object) throw new Error(`asset ${id} not found`);
      await pipeline(object.body, createWriteStream(join(assetDir, id)));
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    assetDir,
    largeOutputDir,
    async artefacts() {
      const entries = await readdir(largeOutputDir, { recursive: true, withFileTypes: true });
      const files = entries.filter((e) => e.isFile() && !(e.parentPath === largeOutputDir && e.name === PROGRESS_FILE));
      return Promise.all(
        files.map(async (e) => {
          const path = join(e.parentPath, e.name);
          return { name: relative(largeOutputDir, path), body: await readFile(path) };
        }),
      );
    },
    remove,
  };
}
