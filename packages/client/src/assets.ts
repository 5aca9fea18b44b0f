import type { RequestOptions } from './control-plane.ts';
import type { SendOptions, Transport } from './transport.ts';

/** The upload header that carries an asset's description (S3 user metadata, as NVCF's upload URLs sign it). */
export const ASSET_DESCRIPTION_HEADER = 'x-amz-meta-nvcf-asset-description';

/** The body of `assets.create`. */
export interface CreateAssetRequest {
  /** The Content-Type the bytes must be uploaded with (printable ASCII, up to 255 characters). */
  contentType: string;
  /** Up to 2048 characters, no control characters; travels as a header on the upload. Default empty. */
  description?: string;
}

/** A new asset and the signed URL its bytes go to (valid 35 minutes; a second upload replaces the first). */
export interface CreatedAsset {
  assetId: string;
  uploadUrl: string;
  contentType: string;
  description: string;
}

/** An asset as `assets.list` lists it. */
export interface AssetSummary {
  assetId: string;
  contentType: string;
  description: string;
}

/** An asset as `assets.get` answers it. */
export interface Asset extends AssetSummary {
  /** ISO-8601. */
  createdAt: string;
}

/**
 * An asset's bytes. Bytes, text and Blobs can be sent again, so a dropped upload is retried; a ReadableStream is
 * read once, so its upload is never retried (a drop, 429 or 503 rejects the call: upload again from the start).
 */
export type AssetBody = Uint8Array | string | Blob | ReadableStream<Uint8Array>;

export interface UploadOptions extends CreateAssetRequest, RequestOptions {}

/** Bytes over a SharedArrayBuffer cannot be a fetch body: those are copied, the rest sent as they are. */
function sendable(body: AssetBody): NonNullable<SendOptions['body']> {
  if (!(body instanceof Uint8Array) || body.buffer instanceof ArrayBuffer)
    return body as NonNullable<SendOptions['body']>;
  return new Uint8Array(body);
}

/**
 * The description travels as a header value on the upload, and fetch sends only Latin-1 ones: a description past
 * U+00FF is accepted by `create` but could never be uploaded, so it is refused before anything is sent.
 */
function checkDescription(description: string | undefined): void {
  const bad = description?.match(/[\u0100-\u{10ffff}]/u)?.[0];
  if (bad === undefined) return;
  const code = `U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new RangeError(`an asset description travels as an HTTP header: Latin-1 characters only (found ${code})`);
}

/**
 * The assets API (NVCF API: asset management): files a function reads its input from, named by an invocation's
 * `assetIds`. An asset belongs to the credential that created it and expires (24 h by default).
 *
 * @example
 * const asset = await nvcf.assets.upload(bytes, { contentType: 'application/octet-stream', description: 'input' });
 * await nvcf.invoke(functionId, body, { assetIds: [asset.assetId] });
 * await nvcf.assets.delete(asset.assetId);
 */
export class AssetsApi {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Records an asset and returns the signed URL to upload its bytes to (see `uploadTo`).
   * @throws RangeError for a description past Latin-1, which no upload could carry
   */
  async create(req: CreateAssetRequest, opts: RequestOptions = {}): Promise<CreatedAsset> {
    checkDescription(req.description);
    return this.#t.json<CreatedAsset>('POST', '/v2/nvcf/assets', req, opts.signal ? { signal: opts.signal } : {});
  }

  /**
   * PUTs an asset's bytes to its signed upload URL, with the Content-Type and description it was created with
   * (the signature covers both) and no credential (the signature is the authorization).
   */
  async uploadTo(
    asset: Pick<CreatedAsset, 'uploadUrl' | 'contentType' | 'description'>,
    body: AssetBody,
    opts: RequestOptions = {},
  ): Promise<void> {
    checkDescription(asset.description);
    const res = await this.#t.send('PUT', new URL(asset.uploadUrl, this.#t.baseUrl).toString(), {
      headers: { 'content-type': asset.contentType, [ASSET_DESCRIPTION_HEADER]: asset.description },
      body: sendable(body),
      idempotent: !(body instanceof ReadableStream),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    await res.body?.cancel();
  }

  /**
   * Creates an asset and uploads its bytes: `create`, then `uploadTo`. When the upload fails the new asset is
   * deleted (best effort) before the error is thrown, so a failed upload leaves nothing counted against the quota.
   */
  async upload(body: AssetBody, opts: UploadOptions): Promise<CreatedAsset> {
    const { signal, ...req } = opts;
    const signalOpt = signal ? { signal } : {};
    const asset = await this.create(req, signalOpt);
    try {
      await this.uploadTo(asset, body, signalOpt);
    } catch (err) {
      await this.delete(asset.assetId).catch(() => undefined);
      throw err;
    }
    return asset;
  }

  /** The credential's assets. */
  async list(opts: RequestOptions = {}): Promise<AssetSummary[]> {
    const signalOpt = opts.signal ? { signal: opts.signal } : {};
    return (await this.#t.json<{ assets: AssetSummary[] }>('GET', '/v2/nvcf/assets', undefined, signalOpt)).assets;
  }

  /** One of the credential's assets (404 when unknown, expired or somebody else's). */
  async get(assetId: string, opts: RequestOptions = {}): Promise<Asset> {
    const path = `/v2/nvcf/assets/${encodeURIComponent(assetId)}`;
    const signalOpt = opts.signal ? { signal: opts.signal } : {};
    return (await this.#t.json<{ asset: Asset }>('GET', path, undefined, signalOpt)).asset;
  }

  /** Deletes an asset and its bytes (404 when unknown). */
  async delete(assetId: string, opts: RequestOptions = {}): Promise<void> {
    const path = `/v2/nvcf/assets/${encodeURIComponent(assetId)}`;
    await this.#t.json('DELETE', path, undefined, opts.signal ? { signal: opts.signal } : {});
  }
}
