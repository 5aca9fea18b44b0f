import { DeploymentSpecification, FUNCTION_STATUSES, functionStatus } from '@nvcf/protocol';
import { FunctionModelSpec, type FunctionVersion } from '@nvcf/queue';
import { z } from 'zod';
import { timestamp, uuidString } from '../http/openapi-schemas.ts';

/**
 * The response shapes of the function and deployment routes, under NVCF's component names (NVCF API reference:
 * FunctionDto, FunctionDeploymentDto…) with our additions. Open to fields beyond these: a function keeps the
 * container fields of its create request as given.
 */
const ArtifactDto = z.object({ name: z.string(), version: z.string(), uri: z.string() }).meta({
  id: 'ArtifactDto',
  description: 'A model or resource: `model-repository://<name>/<version>` or `asset://<assetId>`.',
});

const ContainerEnvironmentEntryDto = z
  .object({ key: z.string(), value: z.string() })
  .meta({ id: 'ContainerEnvironmentEntryDto' });

const HealthDto = z
  .object({
    protocol: z.enum(['HTTP', 'gRPC']),
    uri: z.string(),
    port: z.number().int(),
    timeout: z.string().describe('ISO-8601 duration, e.g. `PT10S`.'),
    expectedStatusCode: z.number().int(),
  })
  .meta({ id: 'HealthDto', description: 'How the container’s health is checked.' });

const InstanceDto = z
  .object({
    instanceId: z.string().describe('The worker id.'),
    functionId: uuidString(),
    functionVersionId: uuidString(),
    instanceStatus: z.enum(['ACTIVE', 'ERRORED', 'PREEMPTED', 'DELETED']),
    ncaId: z.string(),
  })
  .meta({ id: 'InstanceDto', description: 'A live worker serving the version.' });

/** Not in NVCF's DTO: what a caller needs to build a KServe V2 request body for the function. */
const FunctionModel = FunctionModelSpec.meta({
  id: 'FunctionModel',
  description:
    'Ours: the ONNX model behind a model function (a container function has none), with its inputs and outputs ' +
    '(`-1` marks a dynamic dimension). ' +
    '`sequence`: sequence batching, a sequence’s requests go to one worker.',
});

const FunctionDto = z
  .object({
    id: uuidString().describe('Function id.'),
    ncaId: z.string().describe('NVIDIA Cloud Account id.'),
    versionId: uuidString().describe('Function version id.'),
    name: z.string(),
    status: z.enum(FUNCTION_STATUSES),
    inferenceUrl: z.string(),
    ownedByDifferentAccount: z.boolean(),
    inferencePort: z.number().int().optional(),
    containerImage: z.string().optional(),
    containerArgs: z.string().optional(),
    containerEnvironment: z.array(ContainerEnvironmentEntryDto),
    helmChart: z.string().optional(),
    helmChartServiceName: z.string().optional(),
    healthUri: z.string().optional(),
    health: HealthDto.optional(),
    models: z.array(ArtifactDto),
    resources: z.array(ArtifactDto).optional(),
    secretNames: z.array(z.string()).optional().describe('Ours: the names of the secrets given (never their values).'),
    apiBodyFormat: z.enum(['CUSTOM', 'PREDICT_V2']),
    functionType: z.enum(['DEFAULT', 'STREAMING', 'LLM']),
    createdAt: timestamp(),
    description: z.string(),
    tags: z.array(z.string()),
    activeInstances: z.array(InstanceDto),
    model: FunctionModel.optional(),
  })
  .loose()
  .meta({
    id: 'FunctionDto',
    description:
      'One function version. Status: INACTIVE (not deployed), DEPLOYING (deployed, no live worker, `minInstances: 0`: ' +
      'invocable, requests wait), DEGRADED (no live worker), DEGRADING (fewer than `minInstances`), ACTIVE.',
  });

export const FunctionResponse = z.object({ function: FunctionDto }).meta({ id: 'FunctionResponse' });
export const CreateFunctionResponse = z.object({ function: FunctionDto }).meta({ id: 'CreateFunctionResponse' });
export const ListFunctionsResponse = z
  .object({ functions: z.array(FunctionDto) })
  .meta({ id: 'ListFunctionsResponse' });
export const ListFunctionIdsResponse = z
  .object({ functionIds: z.array(uuidString()) })
  .meta({ id: 'ListFunctionIdsResponse' });

/** A deployment specification, as the deployment request gives it and the deployment answers it. */
export const GpuSpecificationDto = DeploymentSpecification.meta({ id: 'GpuSpecificationDto' });

const FunctionDeploymentDto = z
  .object({
    functionId: uuidString(),
    functionVersionId: uuidString(),
    ncaId: z.string(),
    functionStatus: z.enum(FUNCTION_STATUSES),
    requestQueueUrl: z.string().describe('The version’s queue.'),
    healthInfo: z.array(z.object({ gpu: z.string(), backend: z.string(), error: z.string() }).loose()),
    deploymentSpecifications: z.array(GpuSpecificationDto),
  })
  .meta({ id: 'FunctionDeploymentDto' });

export const DeploymentResponse = z.object({ deployment: FunctionDeploymentDto }).meta({ id: 'DeploymentResponse' });

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
export function deploymentDto(fv: FunctionVersion, workerIds: string[], queueKey: string) {
  return {
    functionId: fv.id,
    functionVersionId: fv.versionId,
    ncaId: fv.ncaId,
    functionStatus: functionStatus(fv.deployment, workerIds.length),
    requestQueueUrl: queueKey,
    healthInfo: [],
    deploymentSpecifications: fv.deployment?.specifications ?? [],
  };
}
