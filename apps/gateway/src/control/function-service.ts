import { randomUUID } from 'node:crypto';
import type {
  FunctionAuthorizationStore,
  FunctionModelSpec,
  FunctionQuota,
  FunctionRegistry,
  FunctionSecretStore,
  FunctionVersion,
} from '@nvcf/control-store';
import { modelFunctionId, modelVersionId } from '@nvcf/models';
import { AppError, type CreateFunctionRequest, type DeploymentRequest, type SecretDto } from '@nvcf/protocol';
import {
  functionModelArchiveKey,
  functionModelName,
  functionModelObjectKey,
  isFunctionModelName,
  type ModelArchiveLimits,
  type ObjectStore,
} from '@nvcf/storage';
import type { AssetService } from '../assets/index.ts';
import { functionQuotaExceeded, versionQuotaExceeded } from './account-quotas.ts';
import { assetIdOf, modelFromAsset } from './asset-model.ts';
import { containerSpecOf } from './container-spec.ts';
import type { FunctionAccess } from './function-access.ts';
import { checkSecretsAccepted, secretValuesOf } from './function-secrets.ts';

export interface FunctionService {
  /**
   * Registers a new function, or a new version of `functionId`, in account `ncaId` (the creator's). Status INACTIVE
   * until deployed.
   */
  create(
    req: CreateFunctionRequest,
    opts: { functionId?: string; ownerSubject: string; ncaId: string },
  ): Promise<FunctionVersion>;
  get(functionId: string, versionId: string): Promise<FunctionVersion>;
  versions(functionId: string): Promise<FunctionVersion[]>;
  updateMetadata(
    functionId: string,
    versionId: string,
    change: { tags?: string[]; description?: string },
  ): Promise<FunctionVersion>;
  /**
   * Replaces a version's whole set of secrets (NVCF: updateSecrets); workers serving it restart its server with
   * them.
   */
  updateSecrets(functionId: string, versionId: string, secrets: readonly SecretDto[]): Promise<void>;
  remove(functionId: string, versionId: string): Promise<void>;
  deploy(
    functionId: string,
    versionId: string,
    req: DeploymentRequest,
    opts: { update: boolean },
  ): Promise<FunctionVersion>;
  undeploy(functionId: string, versionId: string): Promise<FunctionVersion>;
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

export interface FunctionServiceOptions {
  onChange: (functionId: string) => void;
  /**
   * Whether the creating account may use a repository model: it may invoke the function that publishes it (that
   * function's account, the workers' `NVCF_NCA_ID`, or one it is shared with).
   */
  access: Pick<FunctionAccess, 'visibleVersion'>;
  /** A deleted version's authorized accounts go with it; a deleted function's, all of them. */
  authorizations: Pick<FunctionAuthorizationStore, 'clear' | 'forget'>;
  assets: AssetService;
  objects: ObjectStore;
  maxModelBytes: number;
  archiveLimits: ModelArchiveLimits;
  /** Drops a deleted version's queue (its waiting requests answered), so nothing of it stays in Redis. */
  retireQueue: (versionId: string) => Promise<void>;
  /** Function secrets, encrypted at rest (without `NVCF_SECRETS_KEY`, a request that carries any is a 400). */
  secrets: FunctionSecretStore;
  /** Functions per account and versions per function (0: unlimited); past them, a create is 403. */
  quota: FunctionQuota;
}

/**
 * The control plane over the function registry (NVCF API reference: function management). A function's
 * model must be one that workers hold (their repositories publish what they load), so a bad reference is
 * a 400 here, never a worker that fails later. Every change is announced so workers start or stop
 * consuming at once.
 */
export function createFunctionService(registry: FunctionRegistry, opts: FunctionServiceOptions): FunctionService {
  const changed = async (fv: FunctionVersion) => {
    await registry.notifyChanged();
    opts.onChange(fv.id);
  };

  /**
   * The ONNX model `models[0]` names: an uploaded asset of the caller's, or a repository model whose publishing
   * function account `ncaId` may invoke ("you may build on a model if you may invoke the function that publishes
   * it"). Anything else, another version's uploaded model (`fv-…`) included, is the same 400 as a model that does
   * not exist, so names cannot be probed across accounts.
   */
  async function modelOf(
    req: CreateFunctionRequest,
    versionId: string,
    owner: { subject: string; ncaId: string },
  ): Promise<FunctionModelSpec> {
    const ref = modelReference(req);
    const assetId = assetIdOf(ref.uri);
    if (assetId) return modelFromAsset(opts, owner.subject, assetId, versionId);
    const source = isFunctionModelName(ref.name) ? undefined : await repositoryModel(owner.ncaId, ref);
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
    ncaId: string,
    ref: { name: string; version: string },
  ): Promise<FunctionModelSpec | undefined> {
    const publisher = await opts.access
      .visibleVersion(ncaId, modelFunctionId(ref.name), modelVersionId(ref.name, ref.version))
      .catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      });
    const model = publisher?.model;
    return model?.name === ref.name && model.version === ref.version ? model : undefined;
  }

  /** Refuses early what the quota would refuse at the end: before a model is converted or secrets written. */
  async function checkQuota(functionId: string | undefined, ncaId: string): Promise<void> {
    const { functionsPerAccount, versionsPerFunction } = opts.quota;
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
  async function store(fv: FunctionVersion, newFunction: boolean): Promise<void> {
    const outcome = await registry.create(fv, { newFunction, quota: opts.quota });
    if (outcome === 'functions') throw functionQuotaExceeded(opts.quota.functionsPerAccount);
    if (outcome === 'versions') throw versionQuotaExceeded(fv.id, opts.quota.versionsPerFunction);
    if (outcome === 'gone') throw new AppError('NOT_FOUND', `Function '${fv.id}' not found`);
  }

  async function get(functionId: string, versionId: string): Promise<FunctionVersion> {
    const fv = await registry.get(functionId, versionId);
    if (!fv) throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
    return fv;
  }

  return {
    async create(req, { functionId, ownerSubject, ncaId }) {
      await checkQuota(functionId, ncaId);
      const versionId = randomUUID();
      // A container function's server is the worker's to reach; a model function's model must exist now.
      const container = containerSpecOf(req);
      const secretValues = secretValuesOf(req.secrets);
      checkSecretsAccepted(opts.secrets, { container }, secretValues);
      const model = container ? undefined : await modelOf(req, versionId, { subject: ownerSubject, ncaId });
      const { name, inferenceUrl, apiBodyFormat, functionType, description, tags, models, secrets, ...rest } = req;
      // A container's image, command and environment are stored once, in `container` (the DTO gives them back).
      const { containerImage: _image, containerArgs: _args, containerEnvironment: _environment, ...spec } = rest;
      const kept = container ? spec : rest;
      const id = functionId ?? randomUUID();
      const fv: FunctionVersion = {
        id,
        versionId,
        name,
        ncaId,
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
      if (Object.keys(secretValues).length === 0) {
        await store(fv, functionId === undefined);
        return fv;
      }
      // Before the version exists: a worker that sees it deployed finds its secrets there.
      await opts.secrets.replace({ functionId: id, versionId }, secretValues);
      try {
        await store(fv, functionId === undefined);
      } catch (err) {
        await opts.secrets.remove(versionId).catch(() => {});
        throw err;
      }
      return fv;
    },
    get,
    async versions(functionId) {
      const all = await registry.versions(functionId);
      if (all.length === 0) throw new AppError('NOT_FOUND', `Function '${functionId}' not found`);
      return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    async updateMetadata(functionId, versionId, change) {
      const fv = await get(functionId, versionId);
      const next = {
        ...fv,
        ...(change.tags ? { tags: change.tags } : {}),
        ...(change.description !== undefined ? { description: change.description } : {}),
      };
      await registry.upsert(next);
      return next;
    },
    async updateSecrets(functionId, versionId, secrets) {
      const fv = await get(functionId, versionId);
      const values = secretValuesOf(secrets);
      checkSecretsAccepted(opts.secrets, fv, values);
      await opts.secrets.replace({ functionId, versionId }, values);
      await registry.upsert({ ...fv, spec: { ...fv.spec, secretNames: secrets.map((s) => s.name) } });
      // Workers serving it restart its server with the new set.
      await changed(fv);
    },
    async remove(functionId, versionId) {
      const fv = await get(functionId, versionId);
      await registry.remove(functionId, versionId);
      await opts.secrets.remove(versionId);
      const last = (await registry.versions(functionId)).length === 0;
      await (last ? opts.authorizations.forget(functionId) : opts.authorizations.clear(functionId, versionId));
      // Workers unload a function model no version refers to any more (consumer-sync) once told.
      await changed(fv);
      if (fv.model) await deleteOwnModel(opts.objects, fv.versionId, fv.model.name);
      await opts.retireQueue(versionId);
    },
    async deploy(functionId, versionId, req, { update }) {
      const fv = await get(functionId, versionId);
      if (update && !fv.deployment)
        throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' is not deployed`);
      if (!update && fv.deployment && fv.deployment.specifications.length > 0) {
        throw new AppError(
          'INVALID_ARGUMENT',
          `Invalid request: function '${functionId}' version '${versionId}' is already deployed; use PUT to change it`,
        );
      }
      const [first] = req.deploymentSpecifications;
      const specs = req.deploymentSpecifications;
      if (update && fv.deployment) {
        const before = fv.deployment.specifications[0];
        if (before && (before.gpu !== first?.gpu || (before.backend ?? null) !== (first?.backend ?? null))) {
          throw new AppError('INVALID_ARGUMENT', "Invalid request: 'gpu' and 'backend' of a deployment cannot change");
        }
      }
      const next: FunctionVersion = {
        ...fv,
        deployment: {
          minInstances: specs.reduce((n, s) => n + s.minInstances, 0),
          maxInstances: specs.reduce((n, s) => n + s.maxInstances, 0),
          maxRequestConcurrency: first?.maxRequestConcurrency ?? 1,
          specifications: specs,
          createdAt: (update ? fv.deployment?.createdAt : undefined) ?? new Date().toISOString(),
        },
      };
      await registry.upsert(next);
      await changed(next);
      return next;
    },
    async undeploy(functionId, versionId) {
      const fv = await get(functionId, versionId);
      const next = { ...fv, deployment: null };
      await registry.upsert(next);
      await changed(next);
      return next;
    },
  };
}

/**
 * Deletes the stored copy of a deleted version's uploaded model. It is that version's alone: no other version may
 * name it (`modelOf`), and workers never serve a version whose `fv-…` model is not its own, so nothing else keeps
 * it (a version stored before that rule that names it is no reference).
 */
async function deleteOwnModel(objects: ObjectStore, versionId: string, modelName: string): Promise<void> {
  if (modelName !== functionModelName(versionId)) return;
  await Promise.all([
    objects.delete(functionModelArchiveKey(versionId)),
    objects.delete(functionModelObjectKey(versionId)),
  ]);
}
