import { functionStatus } from '@nvcf/protocol';
import type { FunctionVersion } from '@nvcf/queue';

/** FunctionDto (NVCF API reference) for one version, with its live workers as active instances. */
export function functionDto(fv: FunctionVersion, workerIds: string[]) {
  return {
    ...fv.spec,
    id: fv.id,
    ncaId: fv.ncaId,
    versionId: fv.versionId,
    name: fv.name,
    status: functionStatus(fv.deployment, workerIds.length),
    inferenceUrl: fv.inferenceUrl,
    ownedByDifferentAccount: false,
    containerEnvironment: (fv.spec.containerEnvironment as unknown) ?? [],
    models: fv.models,
    apiBodyFormat: fv.apiBodyFormat,
    functionType: fv.functionType,
    createdAt: fv.createdAt,
    description: fv.description,
    tags: fv.tags,
    activeInstances: workerIds.map((instanceId) => ({
      instanceId,
      functionId: fv.id,
      functionVersionId: fv.versionId,
      instanceStatus: 'ACTIVE',
      ncaId: fv.ncaId,
    })),
    // Not in NVCF's DTO: what a caller needs to build a KServe V2 request body for this function.
    model: fv.model,
  };
}

/** The deployment DTO (NVCF API reference: function deployment). */
export function deploymentDto(fv: FunctionVersion, workerIds: string[], queueName: string) {
  return {
    functionId: fv.id,
    functionVersionId: fv.versionId,
    ncaId: fv.ncaId,
    functionStatus: functionStatus(fv.deployment, workerIds.length),
    requestQueueUrl: queueName,
    healthInfo: [],
    deploymentSpecifications: fv.deployment?.specifications ?? [],
  };
}
