import type { RequestOptions } from './control-plane.ts';
import { NvcfError } from './errors.ts';
import type { Transport } from './transport.ts';

/** An account authorized to invoke a function (NVCF API reference: AuthorizedPartyDto). */
export interface AuthorizedParty {
  /** The NVIDIA Cloud Account id. */
  ncaId: string;
  /** @deprecated NVCF's document: "should not be specified anymore". */
  clientId?: string;
}

/** A function (or one version) and the accounts authorized to invoke it (NVCF: AuthorizedPartiesByFunctionDto). */
export interface FunctionAuthorizations {
  id: string;
  /** The account that owns the function. */
  ncaId: string;
  /** Present when the answer is a version's. */
  versionId?: string;
  /** A function's own accounts (which every version inherits); a version's own and the inherited ones. */
  authorizedParties: AuthorizedParty[];
}

/** Which authorizations a call addresses: the function's (every version), or one version's. */
export interface AuthorizationOptions extends RequestOptions {
  versionId?: string;
}

const seg = encodeURIComponent;
const signalOf = (opts: RequestOptions) => (opts.signal ? { signal: opts.signal } : {});
const partyOf = (party: string | AuthorizedParty): AuthorizedParty =>
  typeof party === 'string' ? { ncaId: party } : party;

/**
 * Sharing a function with other accounts (NVCF API reference: authorized accounts; scope `authorize_clients`, for the
 * function's owner). An account authorized for the function invokes every version; one authorized for a version,
 * that version. On this gateway another account's function is a 404 until shared with the caller's, and a 403 to
 * manage once shared.
 *
 * @example
 * await nvcf.functions.authorizations.share(functionId, 'team-b'); // team-b invokes every version
 * await nvcf.functions.authorizations.share(functionId, 'team-c', { versionId }); // team-c, that version only
 * await nvcf.functions.authorizations.unshare(functionId, 'team-b');
 */
export class AuthorizationsApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Each version and its authorized accounts, own and inherited (`GET …/authorizations/functions/{fid}`). */
  async list(functionId: string, opts: RequestOptions = {}): Promise<FunctionAuthorizations[]> {
    const path = this.#path(functionId);
    return (await this.#t.json<{ functions: FunctionAuthorizations[] }>('GET', path, undefined, signalOf(opts)))
      .functions;
  }

  /** One version and its authorized accounts, own and inherited. */
  get(functionId: string, versionId: string, opts: RequestOptions = {}): Promise<FunctionAuthorizations> {
    return this.#send('GET', functionId, { ...opts, versionId });
  }

  /** Replaces the accounts authorized for the function, or for one version (`POST`). */
  set(
    functionId: string,
    parties: (string | AuthorizedParty)[],
    opts: AuthorizationOptions = {},
  ): Promise<FunctionAuthorizations> {
    return this.#send('POST', functionId, opts, { authorizedParties: parties.map(partyOf) });
  }

  /**
   * Adds one account (`PATCH …/add`). As NVCF's API: 404 where there are none to add to (`set` first, or use
   * `share`), 409 when it is there already.
   */
  add(
    functionId: string,
    party: string | AuthorizedParty,
    opts: AuthorizationOptions = {},
  ): Promise<FunctionAuthorizations> {
    return this.#send('PATCH', functionId, opts, { authorizedParty: partyOf(party) }, '/add');
  }

  /** Removes one account (`PATCH …/remove`): 404 where there are none, 400 when it is not among them. */
  remove(
    functionId: string,
    party: string | AuthorizedParty,
    opts: AuthorizationOptions = {},
  ): Promise<FunctionAuthorizations> {
    return this.#send('PATCH', functionId, opts, { authorizedParty: partyOf(party) }, '/remove');
  }

  /** Drops the function's own accounts (each version keeps its own), or a version's own (`DELETE`). */
  clear(functionId: string, opts: AuthorizationOptions = {}): Promise<FunctionAuthorizations> {
    return this.#send('DELETE', functionId, opts);
  }

  /**
   * Makes sure an account is authorized, whether or not any is yet: `add`; where NVCF's API answers that there is
   * nothing to add to, `set` with that account alone; an account authorized already is no change. Two first shares
   * of one function (or version) racing each other: the later one's `set` wins.
   */
  async share(functionId: string, party: string | AuthorizedParty, opts: AuthorizationOptions = {}): Promise<void> {
    try {
      await this.add(functionId, party, opts);
    } catch (err) {
      if (!(err instanceof NvcfError) || (err.status !== 404 && err.status !== 409)) throw err;
      if (err.status === 409) return;
      // An unknown function or version is a 404 too: this read throws it.
      if (opts.versionId === undefined) await this.list(functionId, opts);
      else await this.get(functionId, opts.versionId, opts);
      await this.set(functionId, [party], opts);
    }
  }

  /** Withdraws an account's authorization (`remove`). */
  unshare(
    functionId: string,
    party: string | AuthorizedParty,
    opts: AuthorizationOptions = {},
  ): Promise<FunctionAuthorizations> {
    return this.remove(functionId, party, opts);
  }

  #path(functionId: string, versionId?: string): string {
    const base = `/v2/nvcf/authorizations/functions/${seg(functionId)}`;
    return versionId === undefined ? base : `${base}/versions/${seg(versionId)}`;
  }

  async #send(
    method: string,
    functionId: string,
    opts: AuthorizationOptions,
    body?: unknown,
    suffix = '',
  ): Promise<FunctionAuthorizations> {
    const path = `${this.#path(functionId, opts.versionId)}${suffix}`;
    return (await this.#t.json<{ function: FunctionAuthorizations }>(method, path, body, signalOf(opts))).function;
  }
}
