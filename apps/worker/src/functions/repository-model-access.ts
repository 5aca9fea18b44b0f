import {
  accountMayUse,
  type FunctionAuthorizationStore,
  type FunctionModelSpec,
  type FunctionVersion,
} from '@nvcf/control-store';
import { modelFunctionId, modelVersionId } from '@nvcf/models';

type ModelVersion = FunctionVersion & { model: FunctionModelSpec };

const isPublisher = (fv: ModelVersion) =>
  fv.id === modelFunctionId(fv.model.name) && fv.versionId === modelVersionId(fv.model.name, fv.model.version);

/**
 * Which versions may serve a repository model: its publishing function itself, and a version whose account may
 * invoke that function (the account that publishes it, or one it is shared with). Decided here as well as at
 * creation, so that a share withdrawn, or a version another account stored before creation checked it, stops
 * being served. One read of parties per publishing function another account's version names, per sync.
 *
 * @example
 * const mayServe = await repositoryModelAccess(modelVersions, authorizations);
 * mayServe(teamBVersionOfSimple); // false until the `simple` function is shared with team-b
 */
export async function repositoryModelAccess(
  /** Every model version, deployed or not (a publisher an operator undeployed still publishes its model). */
  versions: readonly ModelVersion[],
  authorizations: Pick<FunctionAuthorizationStore, 'get'>,
): Promise<(fv: ModelVersion) => boolean> {
  const modelKey = (fv: ModelVersion) => `${fv.model.name}\u0000${fv.model.version}`;
  const publishers = new Map(versions.filter(isPublisher).map((fv) => [modelKey(fv), fv]));
  const publisherOf = (fv: ModelVersion) => publishers.get(modelKey(fv));
  // A deployed version only: what is not deployed is not served either way.
  const foreign = new Set(
    versions.flatMap((fv) => {
      if (!fv.deployment) return [];
      const publisher = publisherOf(fv);
      return publisher && !isPublisher(fv) && publisher.ncaId !== fv.ncaId ? [publisher.id] : [];
    }),
  );
  // Sent in one tick, the reads leave in one write (auto-pipelining).
  const parties = new Map(
    await Promise.all([...foreign].map(async (id) => [id, await authorizations.get(id)] as const)),
  );
  return (fv) => {
    const publisher = publisherOf(fv);
    if (!publisher) return false;
    if (isPublisher(fv) || publisher.ncaId === fv.ncaId) return true;
    const shared = parties.get(publisher.id);
    return shared !== undefined && accountMayUse(fv.ncaId, publisher, shared);
  };
}
