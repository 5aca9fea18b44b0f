import {
  accountMayUse,
  type FunctionAuthorizationStore,
  type FunctionRegistry,
  type FunctionVersion,
} from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';

/**
 * `GET /v2/nvcf/functions?visibility=` (NVCF: function permissions): `private` the account's own functions,
 * `authorized` other accounts' functions shared with it, `public` NVIDIA's public functions (none here).
 */
export const VISIBILITIES = ['authorized', 'private', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export interface FunctionAccess {
  /** The versions of a function account `ncaId` may see, oldest first; NOT_FOUND when it sees none. */
  visibleVersions(ncaId: string, functionId: string): Promise<FunctionVersion[]>;
  /** One version; NOT_FOUND unless account `ncaId` may see it. */
  visibleVersion(ncaId: string, functionId: string, versionId: string): Promise<FunctionVersion>;
  /**
   * Requires account `ncaId` to own the function (or, given a version that exists, that version): NOT_FOUND
   * when it sees nothing of the function, PERMISSION_DENIED when it sees it shared by another account.
   * Returns the function's versions, oldest first.
   */
  requireOwner(ncaId: string, functionId: string, versionId?: string): Promise<FunctionVersion[]>;
  /** Every version account `ncaId` sees, of the kinds asked. */
  list(ncaId: string, visibility: ReadonlySet<Visibility>): Promise<FunctionVersion[]>;
}

const oldestFirst = (a: FunctionVersion, b: FunctionVersion) => a.createdAt.localeCompare(b.createdAt);

const notFound = (functionId: string, versionId?: string) =>
  new AppError(
    'NOT_FOUND',
    versionId === undefined
      ? `Function '${functionId}' not found`
      : `Function '${functionId}' version '${versionId}' not found`,
  );

/**
 * Who sees and who manages a function, read from Redis (the control plane's pace; invocations use the
 * resolver's cache). A function belongs to the account that created it; an account it is shared with sees
 * and invokes the shared versions and manages nothing. Another account's function that is not shared with the
 * caller does not exist for it (404, as NVCF answers an unknown id), so ids cannot be probed.
 */
export function createFunctionAccess(
  registry: FunctionRegistry,
  authorizations: Pick<FunctionAuthorizationStore, 'get' | 'sharedWith'>,
): FunctionAccess {
  const read = (functionId: string) => Promise.all([registry.versions(functionId), authorizations.get(functionId)]);

  async function visibleVersions(ncaId: string, functionId: string) {
    const [versions, parties] = await read(functionId);
    const visible = versions.filter((fv) => accountMayUse(ncaId, fv, parties)).sort(oldestFirst);
    if (visible.length === 0) throw notFound(functionId);
    return visible;
  }

  return {
    visibleVersions,
    async visibleVersion(ncaId, functionId, versionId) {
      const fv = (await visibleVersions(ncaId, functionId)).find((v) => v.versionId === versionId);
      if (!fv) throw notFound(functionId, versionId);
      return fv;
    },
    async requireOwner(ncaId, functionId, versionId) {
      const [versions, parties] = await read(functionId);
      const version = versions.filter((fv) => fv.versionId === versionId);
      if ((version.length > 0 ? version : versions).some((fv) => fv.ncaId === ncaId)) {
        return versions.sort(oldestFirst);
      }
      if (!versions.some((fv) => accountMayUse(ncaId, fv, parties))) throw notFound(functionId);
      throw new AppError(
        'PERMISSION_DENIED',
        `Function '${functionId}' belongs to another account: only its owner may change it or its authorizations`,
      );
    },
    async list(ncaId, visibility) {
      // The account's own functions and those shared with it, from its indexes: never every account's functions.
      const none = async (): Promise<string[]> => [];
      const [own, shared] = await Promise.all([
        visibility.has('private') ? registry.accountFunctionIds(ncaId) : none(),
        visibility.has('authorized') ? authorizations.sharedWith(ncaId) : none(),
      ]);
      const sharedOnly = shared.filter((id) => !own.includes(id));
      const [ownVersions, sharedVersions, parties] = await Promise.all([
        registry.versionsOf(own),
        registry.versionsOf(sharedOnly),
        Promise.all(sharedOnly.map((id) => authorizations.get(id))),
      ]);
      const visible = [
        ...ownVersions.flat().filter((fv) => fv.ncaId === ncaId),
        ...sharedVersions.flatMap((fvs, i) => {
          const p = parties[i];
          return p ? fvs.filter((fv) => fv.ncaId !== ncaId && accountMayUse(ncaId, fv, p)) : [];
        }),
      ];
      return visible.sort((a, b) => a.id.localeCompare(b.id));
    },
  };
}
