import type { FunctionVersion } from '@nvcf/control-store';
import type { ModelMetadata } from '@nvcf/inference-server';
import { modelFunctionId, modelVersionId } from '@nvcf/models';

export { modelFunctionId, modelVersionId };

/**
 * A model version in the repository is a deployed function version. Deployed with `minInstances: 0`:
 * invocable with no worker up, its requests wait in the queue until one comes.
 */
export function modelFunctionVersion(
  meta: ModelMetadata,
  version: string,
  ncaId: string,
  maxRequestConcurrency = 1,
  opts: { sequence?: boolean } = {},
): FunctionVersion {
  const model = { ...meta, version };
  return {
    id: modelFunctionId(model.name),
    versionId: modelVersionId(model.name, model.version),
    name: model.name,
    ncaId,
    createdAt: new Date().toISOString(),
    description: `ONNX model '${model.name}' version ${model.version} from the model repository`,
    functionType: 'DEFAULT',
    apiBodyFormat: 'PREDICT_V2',
    inferenceUrl: `/v2/models/${model.name}/versions/${model.version}/infer`,
    models: [{ name: model.name, version: model.version, uri: `model-repository://${model.name}/${model.version}` }],
    tags: [],
    spec: {},
    deployment: { minInstances: 0, maxInstances: 1, maxRequestConcurrency, specifications: [] },
    model: {
      name: model.name,
      version: model.version,
      platform: meta.platform,
      inputs: model.inputs,
      outputs: model.outputs,
      ...(opts.sequence ? { sequence: true } : {}),
    },
  };
}
