import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FunctionModelSpec, FunctionVersion } from '@nvcf/control-store';
import type { InferenceCore } from '@nvcf/inference-server';
import { modelConfigToText, parseModelConfigText } from '@nvcf/models';
import type { Logger } from '@nvcf/service-kit';
import {
  extractModelArchive,
  functionModelArchiveKey,
  functionModelName,
  functionModelObjectKey,
  isFunctionModelName,
  type ModelArchiveLimits,
  type ObjectStore,
} from '@nvcf/storage';

export interface FunctionModelLoaderDeps {
  core: InferenceCore;
  objects: ObjectStore;
  repository: string;
  log: Logger;
  /** The gateway checked the archive with its own limits; these guard this worker's disk. */
  archiveLimits: ModelArchiveLimits;
}

/**
 * Whether a version's model is its own upload (`fv-<its versionId>`). A version naming another's `fv-…` model (one
 * stored by a gateway that let it) is never served: the model belongs to the version that uploaded it.
 */
const servesOwnModel = (fv: Pick<FunctionVersion, 'versionId' | 'model'>) =>
  fv.model?.name === functionModelName(fv.versionId);

/** The uploaded models some version owns: every other `fv-…` directory is a deleted version's. */
export const ownedFunctionModels = (versions: readonly FunctionVersion[]): Set<string> =>
  new Set(versions.flatMap((fv) => (fv.model && servesOwnModel(fv) ? [fv.model.name] : [])));

/**
 * Brings a deployed function's own model (uploaded as an asset) into this worker: fetched from the shared
 * object store into the model repository, then loaded like any other model; and takes it out again once its
 * version is deleted. A model that fails is not retried on every sync: it is logged once, and the version stays
 * without this worker. What is kept is per version, so one version's failure never holds back another's model.
 */
export function createFunctionModelLoader(deps: FunctionModelLoaderDeps) {
  /** Version id → why its model failed. */
  const failed = new Map<string, string>();
  return {
    async ensure(fv: FunctionVersion & { model: FunctionModelSpec }): Promise<boolean> {
      if (!servesOwnModel(fv)) return false;
      const name = fv.model.name;
      if (deps.core.isModelReady(name)) return true;
      if (failed.has(fv.versionId)) return false;
      try {
        await fetchModel(deps, fv.versionId, name);
        await deps.core.loadModel(name);
        return true;
      } catch (err) {
        failed.set(fv.versionId, (err as Error).message);
        deps.log.error({ err, model: name, versionId: fv.versionId }, 'function model failed to load; not serving it');
        return false;
      }
    },
    /**
     * Unloads and deletes every function model (`fv-…`) in the repository that `owned` does not name
     * (`ownedFunctionModels`): its version was deleted, so it must not stay callable on the inference ports nor
     * come back on a restart.
     */
    async prune(owned: ReadonlySet<string>): Promise<void> {
      for (const name of await unreferencedFunctionModels(deps.repository, owned)) {
        // A no-op for a model that is not loaded (it failed, or the core skipped it).
        await deps.core
          .unloadModel(name)
          .catch((err: unknown) => deps.log.warn({ err, model: name }, 'unloading a deleted function model failed'));
        await rm(join(deps.repository, name), { recursive: true, force: true });
        deps.log.info({ model: name }, 'function model removed (its function version was deleted)');
      }
      for (const versionId of failed.keys()) {
        if (!owned.has(functionModelName(versionId))) failed.delete(versionId);
      }
    },
  };
}

/**
 * Deletes the directories of function models no version refers to, before the core loads the repository:
 * a version deleted while this worker was down is never loaded again.
 */
export async function removeUnreferencedFunctionModels(
  repository: string,
  referenced: ReadonlySet<string>,
  log: Logger,
): Promise<void> {
  for (const name of await unreferencedFunctionModels(repository, referenced)) {
    await rm(join(repository, name), { recursive: true, force: true });
    log.info({ model: name }, 'function model removed (its function version was deleted)');
  }
}

async function unreferencedFunctionModels(repository: string, referenced: ReadonlySet<string>): Promise<string[]> {
  const entries = await readdir(repository, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && isFunctionModelName(e.name) && !referenced.has(e.name))
    .map((e) => e.name);
}

/**
 * Writes the version's model into `<repository>/<name>`, unpacked in a hidden staging directory (the core
 * skips dot-directories) and renamed into place, so a crash never leaves half a model to load.
 */
async function fetchModel(deps: FunctionModelLoaderDeps, versionId: string, name: string): Promise<void> {
  const staging = join(deps.repository, `.staging-${name}-${randomUUID()}`);
  try {
    let modelDir: string;
    const archive = await deps.objects.get(functionModelArchiveKey(versionId));
    if (archive) {
      const unpacked = await extractModelArchive(archive.body, staging, deps.archiveLimits);
      if (unpacked.files.includes('config.pbtxt')) await renameConfig(join(unpacked.dir, 'config.pbtxt'), name);
      modelDir = unpacked.dir;
    } else {
      const object = await deps.objects.get(functionModelObjectKey(versionId));
      if (!object) throw new Error(`model object ${functionModelObjectKey(versionId)} not found`);
      await mkdir(join(staging, '1'), { recursive: true });
      await pipeline(object.body, createWriteStream(join(staging, '1', 'model.onnx')));
      modelDir = staging;
    }
    await rm(join(deps.repository, name), { recursive: true, force: true });
    await rename(modelDir, join(deps.repository, name));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Triton requires a config's `name` to equal its directory's; the archive's own name is rewritten. */
async function renameConfig(path: string, modelName: string): Promise<void> {
  const parsed = parseModelConfigText(await readFile(path, 'utf8'), 'config.pbtxt');
  await writeFile(path, modelConfigToText({ ...parsed, name: modelName }));
}
