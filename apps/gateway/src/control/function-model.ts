import type { FunctionModelSpec } from '@nvcf/control-store';
import { modelFunctionId, modelVersionId } from '@nvcf/models';
import { AppError, type CreateFunctionRequest } from '@nvcf/protocol';
import { isFunctionModelName } from '@nvcf/storage';
import { type AssetModelDeps, assetIdOf, modelFromAsset } from './asset-model.ts';
import type { FunctionAccess } from './function-access.ts';

export interface FunctionModelDeps extends AssetModelDeps {
  /** Which repository functions the creating account may invoke (their models are the ones it may use). */
  access: Pick<FunctionAccess, 'visibleVersion'>;
}

/**
 * The ONNX model a function serves: `models[0]`, as `model-repository://<name>/<version>` (or name +
 * version) for a model workers publish from their repository, or `asset://<assetId>` for an uploaded `.onnx`
 * file or zipped model directory.
 */
function modelReference(req: CreateFunctionRequest): { name: string; version: string; uri: string } {
  const ref = req.models?.[0];
  if (!ref) {
    throw new AppError(
      'INVALID_ARGUMENT',
      'Invalid request: \'models\' must name the ONNX model to serve: "model-repository://<name>/<version>" or an uploaded asset, "asset://<assetId>" (or give \'containerImage\' for a container function)',
    );
  }
  const m = /^model-repository:\/\/([^/]+)\/([^/]+)$/.exec(ref.uri);
  return m ? { name: m[1] as string, version: m[2] as string, uri: ref.uri } : { ...ref };
}

/**
 * The ONNX model `models[0]` names: an uploaded asset of the caller's, or a repository model whose publishing
 * function account `ncaId` may invoke ("you may build on a model if you may invoke the function that publishes
 * it"). Anything else, another version's uploaded model (`fv-…`) included, is the same 400 as a model that does
 * not exist, so names cannot be probed across accounts.
 */
export async function modelOf(
  deps: FunctionModelDeps,
  req: CreateFunctionRequest,
  versionId: string,
  owner: { subject: string; ncaId: string },
): Promise<FunctionModelSpec> {
  const ref = modelReference(req);
  const assetId = assetIdOf(ref.uri);
  if (assetId) return modelFromAsset(deps, owner.subject, assetId, versionId);
  const source = isFunctionModelName(ref.name) ? undefined : await repositoryModel(deps, owner.ncaId, ref);
  if (!source) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: model '${ref.name}' version '${ref.version}' is not in any worker's model repository`,
    );
  }
  return source;
}

/** The model its publishing function serves, when account `ncaId` may invoke that function. */
async function repositoryModel(
  deps: FunctionModelDeps,
  ncaId: string,
  ref: { name: string; version: string },
): Promise<FunctionModelSpec | undefined> {
  const publisher = await deps.access
    .visibleVersion(ncaId, modelFunctionId(ref.name), modelVersionId(ref.name, ref.version))
    .catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
  const model = publisher?.model;
  return model?.name === ref.name && model.version === ref.version ? model : undefined;
}
