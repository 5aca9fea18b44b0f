import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { archiveFilesFor, readModelArchive } from '@nvcf/models';
import type { FunctionVersion } from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import { functionModelArchiveKey, functionModelObjectKey, type ObjectStore } from '@nvcf/storage';
import type { InferenceCore } from './inference-server/core-types.ts';

/**
 * Brings a deployed function's own model (uploaded as an asset) into this worker: fetched from the shared
 * object store into the model repository, then loaded like any other model. A model that fails is not
 * retried on every sync: it is logged once, and the version stays without this worker.
 */
export function createFunctionModelLoader(deps: {
  core: InferenceCore;
  objects: ObjectStore;
  repository: string;
  log: Logger;
}) {
  const failed = new Map<string, string>();
  return {
    async ensure(fv: FunctionVersion): Promise<boolean> {
      const name = fv.model.name;
      if (deps.core.isModelReady(name)) return true;
      if (failed.has(name)) return false;
      try {
        const modelDir = join(deps.repository, name);
        const archive = await deps.objects.get(functionModelArchiveKey(fv.versionId));
        if (archive) {
          // The gateway checked the archive; the size bound only guards this worker's disk.
          const files = archiveFilesFor(
            readModelArchive(await buffer(archive.body), { maxBytes: 4 * 1024 ** 3 }),
            name,
          );
          for (const [path, data] of files) {
            await mkdir(dirname(join(modelDir, path)), { recursive: true });
            await writeFile(join(modelDir, path), data);
          }
        } else {
          const object = await deps.objects.get(functionModelObjectKey(fv.versionId));
          if (!object) throw new Error(`model object ${functionModelObjectKey(fv.versionId)} not found`);
          await mkdir(join(modelDir, '1'), { recursive: true });
          await writeFile(join(modelDir, '1', 'model.onnx'), await buffer(object.body));
        }
        await deps.core.loadModel(name);
        return true;
      } catch (err) {
        failed.set(name, (err as Error).message);
        deps.log.error({ err, model: name, versionId: fv.versionId }, 'function model failed to load; not serving it');
        return false;
      }
    },
  };
}
