import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AssetQuotaError, type AssetRecord, type AssetStore, assetObjectKey } from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';
import { type ObjectStore, type SigningSecret, signUrl, verifySignedUrl } from '@nvcf/storage';
import { apiKeyIdOf, type Principal, principalKey } from '../auth/principal.ts';
import { createAssetSweeper } from './asset-sweeper.ts';

/** The upload header carrying the description (S3 user metadata `nvcf-asset-description`; NVCF behaviour: assets). */
export const DESCRIPTION_HEADER = 'x-amz-meta-nvcf-asset-description';
export const DESCRIPTION_METADATA_KEY = 'nvcf-asset-description';
/** NVCF's presigned upload URLs live 35 minutes (NVCF behaviour: assets). */
export const DEFAULT_UPLOAD_URL_SECONDS = 35 * 60;
export const DEFAULT_ASSET_MAX_BYTES = 1024 * 1024 * 1024;
/** Per-owner totals of live assets (0: unlimited). NVCF publishes no figure; these are chosen defaults. */
export const DEFAULT_ASSET_QUOTA_BYTES = 10 * 1024 * 1024 * 1024;
export const DEFAULT_ASSET_QUOTA_COUNT = 1000;

/** NVCF's own wording for an unknown asset reference (NVCF behaviour: assets). */
export const assetNotFound = (assetId: string) =>
  new AppError('NOT_FOUND', `NotFound error: failed to find asset ${assetId}`);

/**
 * A quota refusal is 403 (PERMISSION_DENIED), not 429: NVCF answers 429 for throttling that clears in
 * moments (rate limits, a full queue), and its clients retry 429 on their own, which here would resend
 * a large body that still cannot fit. Quota frees only when the caller deletes assets or they expire,
 * which is what the detail says (Google APIs answer a storage quota the same way, e.g. Drive's 403
 * `storageQuotaExceeded`).
 */
const FREE_QUOTA = 'delete assets (DELETE /v2/nvcf/assets/{assetId}) or wait for them to expire';
export const assetBytesQuotaExceeded = (used: number, quota: number, upload: string) =>
  new AppError(
    'PERMISSION_DENIED',
    `asset storage quota exceeded: your assets hold ${used} of ${quota} bytes and this upload ${upload}; ${FREE_QUOTA}`,
  );
export const assetCountQuotaExceeded = (count: number) =>
  new AppError('PERMISSION_DENIED', `asset quota exceeded: you have ${count} assets (the limit); ${FREE_QUOTA}`);

/** The path an asset's bytes are PUT to (signed into its upload URL). */
export const uploadPath = (assetId: string) => `/v2/nvcf/assets/${assetId}/upload`;

export interface AssetServiceOptions {
  store: AssetStore;
  objects: ObjectStore;
  /** Key of the upload URLs' HMAC: every gateway behind one address needs the same one. */
  signingSecret: SigningSecret;
  /** Largest upload (default 1 GiB). */
  maxBytes?: number;
  /** Most bytes one owner's live assets may hold together (default 10 GiB; 0: unlimited). */
  quotaBytes?: number;
  /** Most live assets per owner (default 1000; 0: unlimited). */
  quotaCount?: number;
  /** Scheme + host (+ path prefix) clients reach this gateway at; the request's own origin otherwise. */
  publicBaseUrl?: string;
  uploadUrlSeconds?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

export interface CreatedAsset {
  assetId: string;
  uploadUrl: string;
  contentType: string;
  description: string;
}

/** What a PUT to an upload URL carried. */
export interface UploadRequest {
  expires: string | undefined;
  signature: string | undefined;
  contentType: string | undefined;
  description: string | undefined;
}

export interface AssetService {
  readonly maxBytes: number;
  /**
   * Records an asset and signs its upload URL on `publicBaseUrl`, else on `requestOrigin`.
   * @throws AppError PERMISSION_DENIED when the owner already has `quotaCount` live assets
   */
  create(
    owner: Pick<Principal, 'kind' | 'subject' | 'ncaId'>,
    input: { contentType: string; description: string },
    requestOrigin: string,
  ): Promise<CreatedAsset>;
  /** Checks an upload URL and its signed headers. @throws AppError PERMISSION_DENIED (403) */
  verifyUpload(assetId: string, req: UploadRequest): void;
  /**
   * Streams the bytes of a verified upload into the object store with the asset's content type and
   * description (a second upload replaces the first). `declaredLength` (Content-Length) lets a body
   * past the owner's quota be refused before a byte is read.
   * @throws AppError NOT_FOUND (no such asset), PAYLOAD_TOO_LARGE (past `maxBytes`), PERMISSION_DENIED
   * (past the owner's byte quota); nothing is stored either way
   */
  upload(assetId: string, body: Readable, declaredLength?: number): Promise<AssetRecord>;
  /** The owner's (a `principalKey`) assets, oldest first. */
  list(owner: string): Promise<AssetRecord[]>;
  /** One of the owner's (a `principalKey`) assets. @throws AppError NOT_FOUND (unknown, or somebody else's) */
  get(owner: string, assetId: string): Promise<AssetRecord>;
  /** Deletes the record and the bytes. @throws AppError NOT_FOUND */
  remove(owner: string, assetId: string): Promise<void>;
  /**
   * The records of assets named by an invocation, in order; each must exist and hold bytes, and belong
   * to `owner` (a `principalKey`) when one is given. @throws AppError NOT_FOUND for the first that does not
   */
  resolve(assetIds: readonly string[], owner?: string): Promise<AssetRecord[]>;
  /** Removes the objects of up to `limit` expired assets; how many were removed. */
  sweepExpired(limit?: number): Promise<number>;
  /** Sweeps every `intervalMs` (unref'd timer) until stopped. */
  startSweeper(intervalMs: number, onError: (err: unknown) => void): { stop(): void };
}

/**
 * Whether `owner` (a `principalKey`) owns the asset. An API key's assets stored before owners were principal keys
 * carry its bare id: unique across accounts, so still that key's alone (they expire with the asset TTL). A token's
 * carry a bare `token:<sub>` that any account's token may have: no longer anybody's.
 */
function ownedBy(record: AssetRecord, owner: string): boolean {
  return record.ownerSubject === owner || record.ownerSubject === apiKeyIdOf(owner);
}

function checkBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid public base URL '${url}'`);
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash) {
    throw new Error(`invalid public base URL '${url}': an http(s) URL without query is required`);
  }
  return url.replace(/\/+$/, '');
}

/** The options with their defaults applied, shared by the service's parts. */
interface AssetSettings {
  store: AssetStore;
  objects: ObjectStore;
  signingSecret: SigningSecret;
  maxBytes: number;
  quota: { bytes: number; count: number };
  urlSeconds: number;
  publicBaseUrl: string | undefined;
  now: () => number;
}

function settingsOf(opts: AssetServiceOptions): AssetSettings {
  return {
    store: opts.store,
    objects: opts.objects,
    signingSecret: opts.signingSecret,
    maxBytes: opts.maxBytes ?? DEFAULT_ASSET_MAX_BYTES,
    quota: {
      bytes: opts.quotaBytes ?? DEFAULT_ASSET_QUOTA_BYTES,
      count: opts.quotaCount ?? DEFAULT_ASSET_QUOTA_COUNT,
    },
    urlSeconds: opts.uploadUrlSeconds ?? DEFAULT_UPLOAD_URL_SECONDS,
    publicBaseUrl: opts.publicBaseUrl ? checkBaseUrl(opts.publicBaseUrl) : undefined,
    now: opts.now ?? Date.now,
  };
}

const signedHeaders = (contentType: string | undefined, description: string | undefined) => ({
  'content-type': contentType,
  [DESCRIPTION_HEADER]: description,
});

/**
 * The assets API's logic (NVCF API: asset management): records in Redis, bytes in an object store under
 * `assets/<assetId>`, uploads through this gateway's own signed, expiring `PUT` URLs.
 */
export function createAssetService(opts: AssetServiceOptions): AssetService {
  const settings = settingsOf(opts);
  const { store, objects } = settings;
  const owned = async (owner: string, assetId: string) => {
    const record = await store.get(assetId);
    // Somebody else's asset is answered exactly like an unknown one.
    if (!record || !ownedBy(record, owner)) throw assetNotFound(assetId);
    return record;
  };

  return {
    maxBytes: settings.maxBytes,
    create: (owner, input, requestOrigin) => createAsset(settings, owner, input, requestOrigin),
    verifyUpload: (assetId, req) => verifyUpload(settings, assetId, req),
    upload: (assetId, body, declaredLength) => uploadAsset(settings, assetId, body, declaredLength),

    async list(owner) {
      const legacy = apiKeyIdOf(owner);
      if (legacy === undefined) return store.list(owner);
      const [current, before] = await Promise.all([store.list(owner), store.list(legacy)]);
      return [...current, ...before].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    get: owned,

    async remove(owner, assetId) {
      await owned(owner, assetId);
      // Record first: an upload finishing meanwhile sees it gone and removes its own bytes.
      if (!(await store.delete(assetId))) throw assetNotFound(assetId);
      await objects.delete(assetObjectKey(assetId));
    },

    async resolve(assetIds, owner) {
      const records = await store.getMany(assetIds);
      return assetIds.map((id, i) => {
        const record = records[i];
        const usable = record?.uploadedAt !== undefined && (owner === undefined || ownedBy(record, owner));
        if (!record || !usable) throw assetNotFound(id);
        return record;
      });
    },

    ...createAssetSweeper(settings),
  };
}

/** Records an asset and signs its upload URL. */
async function createAsset(
  settings: AssetSettings,
  owner: Pick<Principal, 'kind' | 'subject' | 'ncaId'>,
  input: { contentType: string; description: string },
  requestOrigin: string,
): Promise<CreatedAsset> {
  const { store, quota, now } = settings;
  // An asset belongs to its creator's credential, recorded with its account (NVCF behaviour: assets).
  const record = await store
    .create({ ...input, ncaId: owner.ncaId, ownerSubject: principalKey(owner) }, quota)
    .catch((err: unknown) => {
      throw err instanceof AssetQuotaError ? assetCountQuotaExceeded(err.used) : err;
    });
  const uploadUrl = signUrl(settings.signingSecret, {
    baseUrl: settings.publicBaseUrl ?? requestOrigin,
    method: 'PUT',
    path: uploadPath(record.assetId),
    expires: Math.floor(now() / 1000) + settings.urlSeconds,
    headers: signedHeaders(record.contentType, record.description),
  });
  return { assetId: record.assetId, uploadUrl, contentType: record.contentType, description: record.description };
}

function verifyUpload(settings: AssetSettings, assetId: string, req: UploadRequest): void {
  const check = verifySignedUrl(settings.signingSecret, {
    method: 'PUT',
    path: uploadPath(assetId),
    expires: req.expires,
    signature: req.signature,
    headers: signedHeaders(req.contentType, req.description),
    now: settings.now(),
  });
  if (check.ok) return;
  const why =
    check.reason === 'invalid'
      ? `the upload URL's signature does not match the request (the Content-Type and ${DESCRIPTION_HEADER} headers must be those the asset was created with)`
      : check.reason === 'expired'
        ? 'the upload URL has expired'
        : 'the upload URL carries no signature';
  throw new AppError('PERMISSION_DENIED', why);
}

/** Streams a verified upload's bytes into the object store, within the upload limit and the owner's byte quota. */
async function uploadAsset(
  settings: AssetSettings,
  assetId: string,
  body: Readable,
  declaredLength: number | undefined,
): Promise<AssetRecord> {
  const { store, objects, quota, maxBytes } = settings;
  const refuse = (err: AppError) => {
    body.destroy();
    return err;
  };
  const asset = await store.get(assetId);
  if (!asset) throw refuse(assetNotFound(assetId));
  // What the owner's other assets leave: the bytes this asset holds now are being replaced.
  const used = quota.bytes > 0 ? (await store.usage(asset.ownerSubject, assetId)).bytes : 0;
  const room = quota.bytes > 0 ? Math.max(0, quota.bytes - used) : Number.POSITIVE_INFINITY;
  if (declaredLength !== undefined && declaredLength > room) {
    throw refuse(assetBytesQuotaExceeded(used, quota.bytes, `needs ${declaredLength}`));
  }
  const key = assetObjectKey(assetId);
  const limit = Math.min(maxBytes, room);
  let size: number;
  try {
    ({ size } = await objects.put(
      key,
      body,
      { contentType: asset.contentType, metadata: { [DESCRIPTION_METADATA_KEY]: asset.description } },
      { maxBytes: limit },
    ));
  } catch (err) {
    // The store stopped the stream at the quota's edge, not at the upload limit.
    if (err instanceof AppError && err.code === 'PAYLOAD_TOO_LARGE' && limit < maxBytes) {
      throw assetBytesQuotaExceeded(used, quota.bytes, `passes the ${room} bytes left`);
    }
    throw err;
  }
  return markUploaded(settings, assetId, size);
}

/** Records an upload's size once its bytes are stored; the bytes go again when the record refuses them. */
async function markUploaded(settings: AssetSettings, assetId: string, size: number): Promise<AssetRecord> {
  const { store, objects, quota } = settings;
  const key = assetObjectKey(assetId);
  let record: AssetRecord | undefined;
  try {
    // Checked again atomically: another upload of the owner's may have landed meanwhile.
    record = await store.markUploaded(assetId, size, quota);
  } catch (err) {
    if (!(err instanceof AssetQuotaError)) throw err;
    await objects.delete(key);
    throw assetBytesQuotaExceeded(err.used, quota.bytes, `needs ${size}`);
  }
  if (!record) {
    // Deleted or expired while the bytes were arriving: they must not outlive the record.
    await objects.delete(key);
    throw assetNotFound(assetId);
  }
  return record;
}

/**
 * The URL signing secret: the configured one, else a random one for this process only (its upload
 * URLs then work on this gateway alone), with a warning saying so.
 */
export function urlSigningSecret(configured: string | undefined, warn: (message: string) => void): string {
  if (configured) return configured;
  warn(
    'URL_SIGNING_SECRET is not set: using a random secret for this process; upload URLs will not work on other gateways or after a restart',
  );
  return randomBytes(32).toString('base64url');
}
