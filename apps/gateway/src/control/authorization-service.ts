import type { AuthorizedParty, FunctionAuthorizationStore, FunctionVersion } from '@nvcf/control-store';
import { AppError, MAX_AUTHORIZED_PARTIES } from '@nvcf/protocol';
import type { FunctionAccess } from './function-access.ts';

/** NVCF's AuthorizedPartiesByFunctionDto: a function (or one version) and the accounts authorized to invoke it. */
export interface AuthorizedPartiesByFunction {
  id: string;
  /** The account that owns the function. */
  ncaId: string;
  versionId?: string;
  authorizedParties: AuthorizedParty[];
}

/** A function's own parties (every version), or one version's. */
export interface AuthorizationTarget {
  functionId: string;
  versionId?: string;
}

/**
 * Sharing a function with other accounts (NVCF API reference: authorized accounts), for the function's owner
 * only (`FunctionAccess.requireOwner`: 404 when the caller sees nothing of it, 403 when it is another account's).
 * A target without a version is the function's own parties, which every version inherits; with one, that
 * version's own. An answer for the function lists its own parties; an answer for a version lists what the
 * version has, its own and the inherited.
 */
export interface AuthorizationService {
  /** Each version with its parties (NVCF: getAuthorizedPartiesForAllVersions). */
  list(ncaId: string, functionId: string): Promise<AuthorizedPartiesByFunction[]>;
  /** One version with its parties (getAuthorizedPartiesForSpecificVersion). */
  get(ncaId: string, target: Required<AuthorizationTarget>): Promise<AuthorizedPartiesByFunction>;
  /** Replaces the parties (createAuthorizedParties…). */
  set(ncaId: string, target: AuthorizationTarget, parties: AuthorizedParty[]): Promise<AuthorizedPartiesByFunction>;
  /** Adds one: 404 where there are none to add to, 409 when it is there already (addAuthorizedParty…). */
  add(ncaId: string, target: AuthorizationTarget, party: AuthorizedParty): Promise<AuthorizedPartiesByFunction>;
  /** Removes one: 404 where there are none, 400 when it is not among them (removeAuthorizedParty…). */
  remove(ncaId: string, target: AuthorizationTarget, party: AuthorizedParty): Promise<AuthorizedPartiesByFunction>;
  /** Drops the target's own parties, never the inherited ones (deleteAuthorizedParties…). */
  clear(ncaId: string, target: AuthorizationTarget): Promise<AuthorizedPartiesByFunction>;
}

export interface AuthorizationServiceOptions {
  access: Pick<FunctionAccess, 'requireOwner'>;
  store: FunctionAuthorizationStore;
  /** After a change: the resolver forgets what it cached of the function, so a removal bites at once here. */
  onChange: (functionId: string) => void;
}

/** The parties of both lists, each account once (the version's own entry wins). */
function merged(inherited: AuthorizedParty[], own: AuthorizedParty[]): AuthorizedParty[] {
  const byAccount = new Map([...inherited, ...own].map((p) => [p.ncaId, p]));
  return [...byAccount.values()].sort((a, b) => a.ncaId.localeCompare(b.ncaId));
}

const scopeName = ({ functionId, versionId }: AuthorizationTarget) =>
  versionId === undefined ? `function '${functionId}'` : `function '${functionId}' version '${versionId}'`;

export function createAuthorizationService(opts: AuthorizationServiceOptions): AuthorizationService {
  const { access, store } = opts;

  /** The owner's versions; with a version, that one must exist. */
  async function owned(ncaId: string, { functionId, versionId }: AuthorizationTarget): Promise<FunctionVersion[]> {
    const versions = await access.requireOwner(ncaId, functionId, versionId);
    if (versionId !== undefined && !versions.some((fv) => fv.versionId === versionId)) {
      throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
    }
    return versions;
  }

  /** The answer for a target, read after the change. */
  async function answer(target: AuthorizationTarget, versions: FunctionVersion[]) {
    const parties = await store.get(target.functionId);
    const fv = versions.find((v) => v.versionId === target.versionId) ?? versions[0];
    const owner = fv?.ncaId ?? '';
    if (target.versionId === undefined) {
      return { id: target.functionId, ncaId: owner, authorizedParties: parties.function };
    }
    const own = parties.versions[target.versionId] ?? [];
    return {
      id: target.functionId,
      ncaId: owner,
      versionId: target.versionId,
      authorizedParties: merged(parties.function, own),
    };
  }

  async function change(
    ncaId: string,
    target: AuthorizationTarget,
    apply: () => Promise<void>,
  ): Promise<AuthorizedPartiesByFunction> {
    const versions = await owned(ncaId, target);
    await apply();
    opts.onChange(target.functionId);
    return answer(target, versions);
  }

  return {
    async list(ncaId, functionId) {
      const versions = await owned(ncaId, { functionId });
      const parties = await store.get(functionId);
      return versions.map((fv) => ({
        id: fv.id,
        ncaId: fv.ncaId,
        versionId: fv.versionId,
        authorizedParties: merged(parties.function, parties.versions[fv.versionId] ?? []),
      }));
    },
    async get(ncaId, target) {
      return answer(target, await owned(ncaId, target));
    },
    set: (ncaId, target, parties) =>
      change(ncaId, target, () => store.set(target.functionId, target.versionId, parties)),
    add: (ncaId, target, party) =>
      change(ncaId, target, async () => {
        const outcome = await store.add(target.functionId, target.versionId, party);
        if (outcome === 'none') {
          throw new AppError(
            'NOT_FOUND',
            `${scopeName(target)} has no authorized accounts to add to: authorize accounts with POST first`,
          );
        }
        if (outcome === 'exists') {
          throw new AppError(
            'ALREADY_EXISTS',
            `account '${party.ncaId}' is already authorized for ${scopeName(target)}`,
          );
        }
        if (outcome === 'full') {
          throw new AppError(
            'INVALID_ARGUMENT',
            `Invalid request: ${scopeName(target)} has ${MAX_AUTHORIZED_PARTIES} authorized accounts, the most it may have`,
          );
        }
      }),
    remove: (ncaId, target, party) =>
      change(ncaId, target, async () => {
        const outcome = await store.remove(target.functionId, target.versionId, party.ncaId);
        if (outcome === 'none') {
          throw new AppError('NOT_FOUND', `${scopeName(target)} has no authorized accounts of its own`);
        }
        if (outcome === 'absent') {
          throw new AppError(
            'INVALID_ARGUMENT',
            `Invalid request: account '${party.ncaId}' is not among the authorized accounts of ${scopeName(target)}`,
          );
        }
      }),
    clear: (ncaId, target) => change(ncaId, target, () => store.clear(target.functionId, target.versionId)),
  };
}
