import type { FunctionAuthorizations } from './function-authorization-store.ts';
import type { FunctionVersion } from './function-registry.ts';

/**
 * Whether account `ncaId` may see and invoke a function version (NVCF: function permissions): the account that
 * created it, and the accounts it authorized, for every version of the function or for that version.
 *
 * @example
 * accountMayUse('team-b', fv, { function: [{ ncaId: 'team-b' }], versions: {} }); // true: shared with team-b
 */
export function accountMayUse(ncaId: string, fv: FunctionVersion, parties: FunctionAuthorizations): boolean {
  return (
    fv.ncaId === ncaId ||
    parties.function.some((p) => p.ncaId === ncaId) ||
    (parties.versions[fv.versionId] ?? []).some((p) => p.ncaId === ncaId)
  );
}
