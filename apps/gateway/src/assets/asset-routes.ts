import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { AssetRecord } from '@nvcf/control-store';
import { AppError, isPrintableText, NON_PRINTABLE_MESSAGE, parseControlRequest } from '@nvcf/protocol';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { principalKey } from '../auth/principal.ts';
import { readJsonBody } from '../http/json-body.ts';
import { describeOperation, jsonContent, jsonResponse, Reason } from '../http/openapi-operation.ts';
import { headerParam, SIGNED_URL_QUERY, timestamp, uuidPath, uuidString } from '../http/openapi-schemas.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { type AssetService, DESCRIPTION_HEADER } from './asset-service.ts';

export interface AssetRouteDeps {
  assets: AssetService;
  auth: Authenticator;
}

// Both values travel back as HTTP header values on the upload: printable text only.
export const CreateAssetRequest = z
  .object({
    contentType: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(255)
      .regex(/^[\u0021-\u007e][\u0020-\u007e]*$/, 'must be printable ASCII'),
    description: z
      .string()
      .trim()
      .max(2048)
      // Listed to other principals' terminals and pages: C1 controls and bidi overrides are refused too.
      .refine(isPrintableText, NON_PRINTABLE_MESSAGE)
      .default(''),
  })
  .meta({ id: 'CreateAssetRequest' });

const CreateAssetResponse = z
  .object({
    assetId: uuidString(),
    uploadUrl: z
      .string()
      .meta({ format: 'uri' })
      .describe('PUT the bytes here, with no credential (signed, expiring).'),
    contentType: z.string(),
    description: z.string(),
  })
  .meta({ id: 'CreateAssetResponse' });
const AssetDto = z
  .object({
    assetId: uuidString(),
    description: z.string(),
    contentType: z.string(),
    createdAt: timestamp().optional().describe('On a single asset’s read.'),
  })
  .meta({ id: 'AssetDto' });
const ListAssetsResponse = z.object({ assets: z.array(AssetDto) }).meta({ id: 'ListAssetsResponse' });
const AssetResponse = z.object({ asset: AssetDto }).meta({ id: 'AssetResponse' });

const tag = 'Asset Management';
const SCOPES = ['invoke_function'] as const;
const ASSET_ID = uuidPath('assetId', 'The asset id.');
const DESCRIPTION_PARAM = headerParam(
  DESCRIPTION_HEADER,
  'The asset’s description, exactly as given when it was created (it is part of the signature).',
  { type: 'string' },
);
const UNKNOWN_ASSET = 'Unknown asset, or another credential’s (`NotFound error: failed to find asset <id>`).';

const summary = (a: AssetRecord) => ({ assetId: a.assetId, description: a.description, contentType: a.contentType });

function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (!/^\d+$/.test(header.trim())) throw new AppError('INVALID_ARGUMENT', 'invalid Content-Length');
  return Number(header.trim());
}

/**
 * The assets API (NVCF API: asset management): create (returns a signed upload URL), upload through that URL
 * (no credential: the signature is the authorization), list, read and delete the caller's own assets.
 */
export function assetRoutes(deps: AssetRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  // Hono matches routes in registration order: the parts keep the order the routes always had.
  app.route('/', assetUploadRoutes(deps));
  app.route('/', assetRecordRoutes(deps));
  return app;
}

const assetIdOf = (value: string) => uuidParam('assetId', value);

/** Create an asset, and upload its bytes through the signed URL the create answered. */
function assetUploadRoutes({ assets, auth }: AssetRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const create = describeOperation({
    tag,
    operationId: 'createAsset',
    summary: 'Create an asset',
    description:
      'Records an asset and answers the signed URL to PUT its bytes to. Assets belong to the credential that created ' +
      'them and expire after ASSET_TTL_SECONDS.',
    scopes: SCOPES,
    requestBody: { required: true, content: jsonContent(CreateAssetRequest) },
    responses: { 200: jsonResponse('The asset and its upload URL.', CreateAssetResponse) },
    problems: {
      400: Reason.badJson,
      403: 'The credential’s asset count quota (ASSET_QUOTA_COUNT) is used up.',
      413: Reason.controlTooLarge,
    },
  });
  app.post('/v2/nvcf/assets', create, requireAuth(auth, 'invoke_function'), async (c) => {
    const input = parseControlRequest(CreateAssetRequest, await readJsonBody(c.req.raw));
    return c.json(await assets.create(c.get('principal'), input, new URL(c.req.url).origin));
  });

  const upload = describeOperation({
    tag,
    operationId: 'uploadAsset',
    summary: 'Upload an asset’s bytes',
    description:
      'The `uploadUrl` of a created asset: the signature (over the method, path, expiry, Content-Type and ' +
      'description) is the authorization. Send the Content-Type the asset was created with. A second upload ' +
      'replaces the first.',
    parameters: [ASSET_ID, ...SIGNED_URL_QUERY, DESCRIPTION_PARAM],
    requestBody: { required: true, content: { '*/*': {} } },
    responses: { 200: { description: 'Stored. Empty body.' } },
    problems: {
      400: 'An asset id that is not a UUID, or an invalid Content-Length.',
      403:
        'A missing, altered or expired signature, different Content-Type or description headers, or the upload ' +
        'would pass the credential’s byte quota (ASSET_QUOTA_BYTES).',
      404: 'The asset was deleted or expired.',
      413: 'The body is larger than ASSET_MAX_BYTES; the connection is closed.',
      503: Reason.redis,
    },
  });
  app.put('/v2/nvcf/assets/:assetId/upload', upload, async (c) => {
    const assetId = assetIdOf(c.req.param('assetId'));
    assets.verifyUpload(assetId, {
      expires: c.req.query('expires'),
      signature: c.req.query('signature'),
      contentType: c.req.header('content-type'),
      description: c.req.header(DESCRIPTION_HEADER),
    });
    const length = declaredLength(c.req.header('content-length'));
    // Refused before a byte is read; a chunked body is counted as it streams.
    if (length !== undefined && length > assets.maxBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `asset exceeds ${assets.maxBytes} bytes`);
    }
    const raw = c.req.raw.body;
    const body = raw ? Readable.fromWeb(raw as NodeReadableStream<Uint8Array>) : Readable.from([]);
    await assets.upload(assetId, body, length);
    return c.body(null, 200);
  });
  return app;
}

/** List, read and delete the caller's own assets. */
function assetRecordRoutes({ assets, auth }: AssetRouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const invoker = requireAuth(auth, 'invoke_function');
  const list = describeOperation({
    tag,
    operationId: 'getAssets',
    summary: 'List assets',
    scopes: SCOPES,
    responses: { 200: jsonResponse('The credential’s assets.', ListAssetsResponse) },
  });
  app.get('/v2/nvcf/assets', list, invoker, async (c) => {
    return c.json({ assets: (await assets.list(principalKey(c.get('principal')))).map(summary) });
  });

  const get = describeOperation({
    tag,
    operationId: 'getAsset',
    summary: 'Get an asset',
    scopes: SCOPES,
    parameters: [ASSET_ID],
    responses: { 200: jsonResponse('The asset.', AssetResponse) },
    problems: { 400: Reason.notUuid, 404: UNKNOWN_ASSET },
  });
  app.get('/v2/nvcf/assets/:assetId', get, invoker, async (c) => {
    const asset = await assets.get(principalKey(c.get('principal')), assetIdOf(c.req.param('assetId')));
    return c.json({ asset: { ...summary(asset), createdAt: asset.createdAt } });
  });

  const remove = describeOperation({
    tag,
    operationId: 'deleteAsset',
    summary: 'Delete an asset',
    description: 'Deletes the record and the bytes.',
    scopes: SCOPES,
    parameters: [ASSET_ID],
    responses: { 204: { description: 'Deleted.' } },
    problems: { 400: Reason.notUuid, 404: UNKNOWN_ASSET },
  });
  app.delete('/v2/nvcf/assets/:assetId', remove, invoker, async (c) => {
    await assets.remove(principalKey(c.get('principal')), assetIdOf(c.req.param('assetId')));
    return c.body(null, 204);
  });
  return app;
}
