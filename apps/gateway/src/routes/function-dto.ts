import { FunctionModelSpec, type FunctionVersion, type WorkerMachine } from '@nvcf/control-store';
import { DeploymentSpecification, FUNCTION_STATUSES, functionStatus } from '@nvcf/protocol';
import { z } from 'zod';
import { timestamp, uuidString } from '../http/openapi-schemas.ts';

/**
 * The response shapes of the function and deployment routes, under NVCF's component names (NVCF API reference:
 * FunctionDto, FunctionDeploymentDto…) with our additions. Open to fields beyond these: a function keeps the
 * container fields of its create request as given.
 */
const ArtifactDto = z.object({ name: z.string(), version: z.string(), uri: z.string().meta({ format: 'uri' }) }).meta({
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
    instanceType: z.string().optional().describe('The instance type the worker reports.'),
    gpu: z.string().optional().describe('The GPU the worker reports (`CPU` for none).'),
    sisRequestId: uuidString()
      .optional()
      .describe('NVCF’s instance-launch request id. Never present here: workers are started by their operator.'),
    backend: z.string().optional().describe('The worker pool (`WORKER_POOL`) the worker belongs to.'),
    location: z.string().optional().describe('Where the instance runs. Never present here: a pool says where.'),
    instanceCreatedAt: timestamp().optional().describe('When the worker started.'),
    instanceUpdatedAt: timestamp().optional().describe('The worker’s latest heartbeat.'),
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
    inferenceUrl: z
      .string()
      .meta({ format: 'uri-reference' })
      .describe('The path pexec calls on the function (NVCF’s document says `uri`; its functions give a path).'),
    ownedByDifferentAccount: z
      .boolean()
      .describe(
        'The function belongs to another account, which shared it with the caller’s (visibility `authorized`).',
      ),
    inferencePort: z.number().int().optional(),
    containerImage: z.string().optional(),
    containerArgs: z.string().optional(),
    containerEnvironment: z.array(ContainerEnvironmentEntryDto),
    helmChart: z.string().optional(),
    helmChartServiceName: z.string().optional(),
    healthUri: z
      .string()
      .meta({ format: 'uri-reference' })
      .describe('The path the worker checks the function’s readiness on: the container’s, or `/v2/health/ready`.'),
    health: HealthDto.optional(),
    models: z.array(ArtifactDto),
    resources: z.array(ArtifactDto),
    secrets: z
      .array(z.string())
      .meta({ uniqueItems: true })
      .optional()
      .describe('The names of the version’s secrets (never their values).'),
    secretNames: z.array(z.string()).optional().describe('Ours, kept for older clients: the same as `secrets`.'),
    apiBodyFormat: z.enum(['PREDICT_V2', 'CUSTOM']),
    functionType: z
      .enum(['DEFAULT', 'STREAMING', 'LLM'])
      .describe('`LLM`: self-hosted NVCF’s type for OpenAI-shaped functions, beyond the document’s two.'),
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
      'One function version. Status: INACTIVE (not deployed), DEPLOYING (deployed, no live worker yet: invocable ' +
      'only with `minInstances: 0`, requests wait for a worker), ACTIVE (at least one live worker).',
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

const DeploymentHealthDto = z
  .object({
    gpu: z.string(),
    backend: z.string(),
    error: z.string(),
    instanceType: z.string().optional(),
    sisRequestId: uuidString().optional(),
  })
  .meta({ id: 'DeploymentHealthDto' });

const FunctionDeploymentDto = z
  .object({
    functionId: uuidString(),
    functionVersionId: uuidString(),
    functionName: z.string(),
    ncaId: z.string(),
    functionStatus: z.enum(FUNCTION_STATUSES),
    requestQueueUrl: z.string().meta({ deprecated: true }).describe('The version’s queue (deprecated in NVCF).'),
    healthInfo: z
      .array(DeploymentHealthDto)
      .describe('Only a specification with an issue appears here; this product reports none.'),
    deploymentSpecifications: z.array(GpuSpecificationDto),
    createdAt: timestamp().describe('When the version was deployed.'),
  })
  .meta({ id: 'FunctionDeploymentDto' });

export const DeploymentResponse = z.object({ deployment: FunctionDeploymentDto }).meta({ id: 'DeploymentResponse' });

/** The worker's own readiness path (KServe V2), which a model function is checked on. */
const MODEL_HEALTH_URI = '/v2/health/ready';

/** The health path as given (`healthUri`, else `health.uri`), else the one the worker checks. */
function healthUriOf(fv: FunctionVersion): string {
  const given = fv.spec.healthUri;
  if (typeof given === 'string') return given;
  return fv.container?.health.uri ?? MODEL_HEALTH_URI;
}

/**
 * A container function's create fields from its stored container, where they are kept once (versions the release
 * before stored kept them in `spec` too, with the same values).
 */
function containerFieldsOf(fv: FunctionVersion) {
  const c = fv.container;
  if (!c) return {};
  return { containerImage: c.image, ...(c.args !== undefined ? { containerArgs: c.args } : {}) };
}

/**
 * FunctionDto (NVCF API reference) for one version, with its live workers as active instances; a worker whose
 * heartbeat names its machine gives its instance NVCF's `gpu` and `instanceType`. `viewer`: the caller's account
 * (`ownedByDifferentAccount` when it is not the function's); absent: the owner is looking.
 */
export function functionDto(
  fv: FunctionVersion,
  workerIds: string[],
  machines: ReadonlyMap<string, WorkerMachine & { beatAt?: number }> = new Map(),
  viewer: string = fv.ncaId,
) {
  const dto = {
    ...fv.spec,
    ...containerFieldsOf(fv),
    id: fv.id,
    ncaId: fv.ncaId,
    versionId: fv.versionId,
    name: fv.name,
    status: functionStatus(fv.deployment, workerIds.length),
    inferenceUrl: fv.inferenceUrl,
    ownedByDifferentAccount: viewer !== fv.ncaId,
    containerEnvironment: fv.container?.environment ?? (fv.spec.containerEnvironment as unknown) ?? [],
    healthUri: healthUriOf(fv),
    models: fv.models,
    resources: (fv.spec.resources as unknown) ?? [],
    ...(Array.isArray(fv.spec.secretNames) ? { secrets: fv.spec.secretNames } : {}),
    apiBodyFormat: fv.apiBodyFormat,
    functionType: fv.functionType,
    createdAt: fv.createdAt,
    description: fv.description,
    tags: fv.tags,
    activeInstances: workerIds.map((instanceId) => {
      const machine = machines.get(instanceId);
      return {
        instanceId,
        functionId: fv.id,
        functionVersionId: fv.versionId,
        instanceStatus: 'ACTIVE',
        ncaId: fv.ncaId,
        ...(machine ? { gpu: machine.gpu, instanceType: machine.instanceType, backend: machine.pool } : {}),
        ...(machine?.startedAt ? { instanceCreatedAt: new Date(machine.startedAt).toISOString() } : {}),
        ...(machine?.beatAt ? { instanceUpdatedAt: new Date(machine.beatAt).toISOString() } : {}),
      };
    }),
    // Not in NVCF's DTO: what a caller needs to build a KServe V2 request body for this function.
    model: fv.model,
  };
  return viewer === fv.ncaId ? dto : forAnotherAccount(dto);
}

/**
 * What an account a version is shared with sees of it: enough to find and invoke it, not how its owner runs it.
 * `containerArgs` and `containerEnvironment` carry the owner's command line and settings (often credentials), and
 * the secrets' names say which credentials it holds.
 */
function forAnotherAccount<T extends { containerEnvironment: unknown }>(dto: T) {
  const {
    containerArgs: _args,
    secrets: _secrets,
    secretNames: _names,
    ...rest
  } = dto as T & { containerArgs?: unknown; secrets?: unknown; secretNames?: unknown };
  return { ...rest, containerEnvironment: [] };
}

/** A FunctionDto without its secrets' names (NVCF's `includeSecrets=false`). */
export function withoutSecretNames<T extends object>(dto: T): Omit<T, 'secrets' | 'secretNames'> {
  const { secrets: _names, secretNames: _older, ...rest } = dto as T & { secrets?: unknown; secretNames?: unknown };
  return rest;
}

/** The deployment DTO (NVCF API reference: function deployment). */
export function deploymentDto(fv: FunctionVersion, workerIds: string[], queueKey: string) {
  return {
    functionId: fv.id,
    functionVersionId: fv.versionId,
    functionName: fv.name,
    ncaId: fv.ncaId,
    functionStatus: functionStatus(fv.deployment, workerIds.length),
    requestQueueUrl: queueKey,
    healthInfo: [],
    deploymentSpecifications: fv.deployment?.specifications ?? [],
    // A deployment stored before its time was kept answers its version's.
    createdAt: fv.deployment?.createdAt ?? fv.createdAt,
  };
}
