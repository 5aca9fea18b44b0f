import type { ContainerSpec, FunctionModelSpec, FunctionVersion } from '@nvcf/control-store';
import { isFunctionModelName } from '@nvcf/storage';
import type { ConsumerSyncDeps } from './consumer-sync.ts';
import { readVersionSecrets } from './container/version-secrets.ts';
import { modelConcurrency } from './functions/model-capacity.ts';
import { modelFunctionVersion } from './functions/model-functions.ts';
import { repositoryModelAccess } from './functions/repository-model-access.ts';

type ModelVersion = FunctionVersion & { model: FunctionModelSpec };
type ContainerVersion = FunctionVersion & { container: ContainerSpec };
export const isContainer = (fv: FunctionVersion): fv is ContainerVersion => fv.container !== undefined;
export const isModel = (fv: FunctionVersion): fv is ModelVersion => fv.model !== undefined;

const modelKey = (name: string, version: string) => `${name}\u0000${version}`;

/** Whether this worker may serve a version at all: `WORKER_FUNCTION_VERSIONS` lists the only ones (empty: every one). */
export type ServesVersion = (versionId: string) => boolean;

export function servesVersion(functionVersionIds: readonly string[]): ServesVersion {
  const only = new Set(functionVersionIds);
  return (versionId) => only.size === 0 || only.has(versionId);
}

/**
 * Publishes every repository model loaded here as a function version of its own, and returns which models are
 * loaded here (every one, uploaded models too), as `wantedVersions` takes them.
 */
export async function publishLoadedModels({ core, registry, config }: ConsumerSyncDeps): Promise<Set<string>> {
  const loaded = (await core.repositoryIndex({ readyOnly: true })).filter((e) => e.version !== undefined);
  const here = new Set<string>();
  for (const entry of loaded) {
    const version = entry.version as string;
    here.add(modelKey(entry.name, version));
    // A function's own model (from an asset) is not a repository function of its own.
    if (isFunctionModelName(entry.name)) continue;
    const modelConfig = core.modelConfig(entry.name, version);
    const concurrency = config.concurrency || modelConcurrency(modelConfig);
    const sequence = modelConfig.extra.sequence_batching !== undefined;
    await registry.seed(
      modelFunctionVersion(core.modelMetadata(entry.name, version), version, config.ncaId, concurrency, {
        sequence,
      }),
    );
  }
  return here;
}

/**
 * The deployed versions to consume now, containers first: a container's while its server is healthy (its servers
 * are started or stopped here to match), a model's while it is loaded here (an uploaded model: fetched and loaded
 * here) and the version's account may use it.
 */
export async function wantedVersions(
  deps: ConsumerSyncDeps,
  versions: readonly FunctionVersion[],
  loaded: ReadonlySet<string>,
  serves: ServesVersion,
): Promise<Map<string, FunctionVersion>> {
  const wanted = new Map<string, FunctionVersion>();
  const containers = versions.filter((fv) => isContainer(fv) && fv.deployment && serves(fv.versionId));
  const served = containers.filter(isContainer);
  // Read each sync: a secrets PUT is announced as a deployment change, so it reaches the servers at once.
  const secrets = deps.containers.mode === 'none' ? undefined : await readVersionSecrets(deps.secrets, served);
  await deps.containers.want(served, secrets);
  for (const fv of containers) {
    if (deps.containers.instance(fv.versionId)?.healthy) wanted.set(fv.versionId, fv);
  }
  const mayServe = await repositoryModelAccess(versions.filter(isModel), deps.authorizations);
  for (const fv of versions) {
    // Before the model is fetched: a worker pool never downloads the models of versions it does not serve.
    if (!fv.deployment || !serves(fv.versionId) || !isModel(fv)) continue;
    // An uploaded model is served for the version that uploaded it only, never by its name for another.
    if (isFunctionModelName(fv.model.name)) {
      if (await deps.functionModels.ensure(fv)) wanted.set(fv.versionId, fv);
      continue;
    }
    if (loaded.has(modelKey(fv.model.name, fv.model.version)) && mayServe(fv)) wanted.set(fv.versionId, fv);
  }
  return wanted;
}

/**
 * A consumer's concurrency: a container's is the deployment's `maxRequestConcurrency`; a model's follows the model
 * (model-capacity.ts), raised to the deployment's when that asks for more, unless `WORKER_CONCURRENCY` fixes it.
 */
export function concurrencyFor({ core, config }: ConsumerSyncDeps, fv: FunctionVersion): number {
  if (!isModel(fv)) return fv.deployment?.maxRequestConcurrency ?? 1;
  if (config.concurrency > 0) return config.concurrency;
  const model = modelConcurrency(core.modelConfig(fv.model.name, fv.model.version));
  return Math.max(model, fv.deployment?.maxRequestConcurrency ?? 1);
}
