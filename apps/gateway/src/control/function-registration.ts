import { randomUUID } from 'node:crypto';
import type {
  ContainerSpec,
  FunctionModelSpec,
  FunctionQuota,
  FunctionRegistry,
  FunctionSecretStore,
  FunctionVersion,
  SecretValues,
} from '@nvcf/control-store';
import { AppError, type CreateFunctionRequest } from '@nvcf/protocol';
import { functionQuotaExceeded, versionQuotaExceeded } from './account-quotas.ts';
import { containerSpecOf } from './container-spec.ts';
import { type FunctionModelDeps, modelOf } from './function-model.ts';
import { checkSecretsAccepted, secretValuesOf } from './function-secrets.ts';

export interface RegistrationDeps extends FunctionModelDeps {
  secrets: FunctionSecretStore;
  quota: FunctionQuota;
}

/** Who creates a version: a new function when `functionId` is absent. */
export interface RegistrationOwner {
  functionId?: string;
  ownerSubject: string;
  ncaId: string;
}

/**
 * Registers a new function, or a new version of `functionId`, in account `ncaId` (the creator's). Status INACTIVE
 * until deployed.
 */
export async function registerVersion(
  registry: FunctionRegistry,
  deps: RegistrationDeps,
  req: CreateFunctionRequest,
  { functionId, ownerSubject, ncaId }: RegistrationOwner,
): Promise<FunctionVersion> {
  await checkQuota(registry, deps.quota, functionId, ncaId);
  const versionId = randomUUID();
  // A container function's server is the worker's to reach; a model function's model must exist now.
  const container = containerSpecOf(req);
  const secretValues = secretValuesOf(req.secrets);
  checkSecretsAccepted(deps.secrets, { container }, secretValues);
  const model = container ? undefined : await modelOf(deps, req, versionId, { subject: ownerSubject, ncaId });
  const fv = versionRecord(req, { id: functionId ?? randomUUID(), versionId, ncaId }, model, container);
  const newFunction = functionId === undefined;
  if (Object.keys(secretValues).length === 0) {
    await store(registry, deps.quota, fv, newFunction);
    return fv;
  }
  await storeWithSecrets(registry, deps, fv, newFunction, secretValues);
  return fv;
}

/** The version a create request describes. */
function versionRecord(
  req: CreateFunctionRequest,
  ids: { id: string; versionId: string; ncaId: string },
  model: FunctionModelSpec | undefined,
  container: ContainerSpec | undefined,
): FunctionVersion {
  const { name, inferenceUrl, apiBodyFormat, functionType, description, tags, models, secrets, ...rest } = req;
  // A container's image, command and environment are stored once, in `container` (the DTO gives them back).
  const { containerImage: _image, containerArgs: _args, containerEnvironment: _environment, ...spec } = rest;
  const kept = container ? spec : rest;
  return {
    id: ids.id,
    versionId: ids.versionId,
    name,
    ncaId: ids.ncaId,
    createdAt: new Date().toISOString(),
    description: description ?? '',
    functionType,
    apiBodyFormat,
    inferenceUrl,
    models: models ?? [],
    tags: tags ?? [],
    // Their names only: the values are in the secret store, encrypted, and never returned.
    spec: { ...kept, ...(secrets ? { secretNames: secrets.map((s) => s.name) } : {}) },
    deployment: null,
    ...(model ? { model } : {}),
    ...(container ? { container } : {}),
  };
}

async function storeWithSecrets(
  registry: FunctionRegistry,
  deps: RegistrationDeps,
  fv: FunctionVersion,
  newFunction: boolean,
  secretValues: SecretValues,
): Promise<void> {
  // Before the version exists: a worker that sees it deployed finds its secrets there.
  await deps.secrets.replace({ functionId: fv.id, versionId: fv.versionId }, secretValues);
  try {
    await store(registry, deps.quota, fv, newFunction);
  } catch (err) {
    await deps.secrets.remove(fv.versionId).catch(() => {});
    throw err;
  }
}

/** Refuses early what the quota would refuse at the end: before a model is converted or secrets written. */
async function checkQuota(
  registry: FunctionRegistry,
  quota: FunctionQuota,
  functionId: string | undefined,
  ncaId: string,
): Promise<void> {
  const { functionsPerAccount, versionsPerFunction } = quota;
  if (functionId === undefined) {
    if (functionsPerAccount > 0 && (await registry.accountFunctionIds(ncaId)).length >= functionsPerAccount) {
      throw functionQuotaExceeded(functionsPerAccount);
    }
    return;
  }
  const versions = (await registry.versions(functionId)).length;
  if (versions === 0) throw new AppError('NOT_FOUND', `Function '${functionId}' not found`);
  if (versionsPerFunction > 0 && versions >= versionsPerFunction) {
    throw versionQuotaExceeded(functionId, versionsPerFunction);
  }
}

/** Stores a new version: the quota is checked again in the same script that writes it (concurrent creates). */
async function store(
  registry: FunctionRegistry,
  quota: FunctionQuota,
  fv: FunctionVersion,
  newFunction: boolean,
): Promise<void> {
  const outcome = await registry.create(fv, { newFunction, quota });
  if (outcome === 'functions') throw functionQuotaExceeded(quota.functionsPerAccount);
  if (outcome === 'versions') throw versionQuotaExceeded(fv.id, quota.versionsPerFunction);
  if (outcome === 'gone') throw new AppError('NOT_FOUND', `Function '${fv.id}' not found`);
}
