import type {
  FunctionAuthorizationStore,
  FunctionQuota,
  FunctionRegistry,
  FunctionSecretStore,
  FunctionVersion,
  LiveWorker,
} from '@nvcf/control-store';
import { AppError, type CreateFunctionRequest, type DeploymentRequest, type SecretDto } from '@nvcf/protocol';
import {
  functionModelArchiveKey,
  functionModelName,
  functionModelObjectKey,
  type ModelArchiveLimits,
  type ObjectStore,
} from '@nvcf/storage';
import type { AssetService } from '../assets/index.ts';
import type { FunctionAccess } from './function-access.ts';
import { type RegistrationOwner, registerVersion } from './function-registration.ts';
import { checkSecretsAccepted, secretValuesOf } from './function-secrets.ts';

export interface FunctionService {
  /**
   * Registers a new function, or a new version of `functionId`, in account `ncaId` (the creator's). Status INACTIVE
   * until deployed.
   */
  create(req: CreateFunctionRequest, opts: RegistrationOwner): Promise<FunctionVersion>;
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
  /** Who serves these versions now (what a function's DTO shows of its workers). One read of each kind. */
  presence(versionIds: readonly string[]): Promise<VersionPresence>;
  /** Ids of the live workers of one version (what a deployment's status is read from). */
  liveWorkers(versionId: string): Promise<string[]>;
}

/** The live workers of some versions, and the machines live workers run on. */
export interface VersionPresence {
  /** Ids of each version's live workers, in the order asked. */
  workerIds: string[][];
  /** Every live worker whose heartbeat named its machine, by worker id. */
  machines: ReadonlyMap<string, LiveWorker>;
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
  const get = async (functionId: string, versionId: string): Promise<FunctionVersion> => {
    const fv = await registry.get(functionId, versionId);
    if (!fv) throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
    return fv;
  };
  /** Stores a changed version and announces it. */
  const replace = async (next: FunctionVersion) => {
    await registry.upsert(next);
    await changed(next);
    return next;
  };

  return {
    create: (req, owner) => registerVersion(registry, opts, req, owner),
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
      return replace({ ...fv, deployment: nextDeployment(fv, req, update) });
    },
    async undeploy(functionId, versionId) {
      return replace({ ...(await get(functionId, versionId)), deployment: null });
    },
    ...workerPresence(registry),
  };
}

/** Who serves which version now, as the workers' heartbeats tell. */
function workerPresence(registry: FunctionRegistry): Pick<FunctionService, 'presence' | 'liveWorkers'> {
  return {
    async presence(versionIds) {
      const [workerIds, machines] = await Promise.all([registry.liveWorkers(versionIds), registry.liveMachines()]);
      return { workerIds, machines: new Map(machines.map((m) => [m.workerId, m])) };
    },
    async liveWorkers(versionId) {
      const [live] = await registry.liveWorkers([versionId]);
      return live ?? [];
    },
  };
}

/**
 * The deployment `req` asks for: a first one (a version deployed already is a 400: PUT changes it), or a change of
 * the current one (`update`), which keeps its `gpu` and `backend`.
 */
function nextDeployment(
  fv: FunctionVersion,
  req: DeploymentRequest,
  update: boolean,
): NonNullable<FunctionVersion['deployment']> {
  const { id: functionId, versionId } = fv;
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
  return {
    minInstances: specs.reduce((n, s) => n + s.minInstances, 0),
    maxInstances: specs.reduce((n, s) => n + s.maxInstances, 0),
    maxRequestConcurrency: first?.maxRequestConcurrency ?? 1,
    specifications: specs,
    createdAt: (update ? fv.deployment?.createdAt : undefined) ?? new Date().toISOString(),
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
