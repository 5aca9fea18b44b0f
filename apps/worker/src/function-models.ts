import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { FunctionVersion } from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import { functionModelObjectKey, type ObjectStore } from '@nvcf/storage';
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
        const object = await deps.objects.get(functionModelObjectKey(fv.versionId));
        if (!object) throw new Error(`model object ${functionModelObjectKey(fv.versionId)} not found`);
        const dir = join(deps.repository, name, '1');
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, 'model.onnx'), await buffer(object.body));
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
