import type { RequestOptions } from './control-plane.ts';
import type { Transport } from './transport.ts';

/** An API key as the gateway shows it: never its secret, which only `create` returns, once. */
export interface ApiKey {
  id: string;
  name: string;
  /** Scope names, e.g. `invoke_function`, `list_functions`, `manage_keys`. */
  scopes: string[];
  /** The functions the key may use; absent: every function. */
  functionIds?: string[];
  /** The account (NVIDIA Cloud Account id) it belongs to. */
  ncaId: string;
  /** ISO-8601. */
  createdAt: string;
  /** ISO-8601; present once revoked (the key then gets 401 everywhere). */
  revokedAt?: string;
}

/** The body of `keys.create`. */
export interface CreateKeyRequest {
  /** 1–128 characters. */
  name: string;
  /** At least one; only scopes the calling credential holds itself (403 otherwise). */
  scopes: string[];
  /**
   * Restricts the key to these functions (non-empty). Required when the calling credential is itself restricted,
   * and then a subset of its own functions.
   */
  functionIds?: string[];
  /**
   * The account the key belongs to; absent: the caller's. Another account's only for an operator (every scope, in
   * the gateway's own account): how an operator makes a second account.
   */
  ncaId?: string;
}

/** What `keys.create` returns: the key, and its secret (`nvapi-…`), shown this once. */
export interface CreatedKey {
  key: ApiKey;
  value: string;
}

const signalOf = (opts: RequestOptions) => (opts.signal ? { signal: opts.signal } : {});

/**
 * API keys (`/v2/nvcf/keys`; the calling credential needs the `manage_keys` scope). A credential sees and revokes
 * the keys of its account it could have created (no more scopes or functions than its own) and itself; an operator,
 * every account's. A revoked key stops
 * working on every gateway within the gateway's `AUTH_CACHE_MS` (2 s by default).
 *
 * @example
 * const { key, value } = await nvcf.keys.create({ name: 'ci', scopes: ['invoke_function'], functionIds: [fid] });
 * const ci = new NvcfClient({ baseUrl, apiKey: value }); // the secret is never shown again
 * await nvcf.keys.revoke(key.id);
 */
export class KeysApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Creates a key (`POST /v2/nvcf/keys`). A POST: a dropped connection is not retried, since the retry would make a
   * second key.
   */
  create(req: CreateKeyRequest, opts: RequestOptions = {}): Promise<CreatedKey> {
    return this.#t.json<CreatedKey>('POST', '/v2/nvcf/keys', req, signalOf(opts));
  }

  /** The keys this credential manages, oldest first, revoked ones included (`GET /v2/nvcf/keys`). */
  async list(opts: RequestOptions = {}): Promise<ApiKey[]> {
    return (await this.#t.json<{ keys: ApiKey[] }>('GET', '/v2/nvcf/keys', undefined, signalOf(opts))).keys;
  }

  /** Revokes a key (`DELETE /v2/nvcf/keys/{keyId}`); revoking a revoked key is no change, an unknown id is a 404. */
  async revoke(keyId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#t.json('DELETE', `/v2/nvcf/keys/${encodeURIComponent(keyId)}`, undefined, signalOf(opts));
  }
}
