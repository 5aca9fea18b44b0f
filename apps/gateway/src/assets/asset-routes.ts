import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { AppError, parseControlRequest } from '@nvcf/protocol';
import type { AssetRecord } from '@nvcf/queue';
import { Hono } from 'hono';
import { z } from 'zod';
import { type AuthEnv, requireAuth } from '../auth/auth-middleware.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { readJsonBody } from '../http/json-body.ts';
import { uuidParam } from '../invocation/uuid-param.ts';
import { type AssetService, DESCRIPTION_HEADER } from './asset-service.ts';

export interface AssetRouteDeps {
  assets: AssetService;
  auth: Authenticator;
}

// Both values travel back as HTTP header values on the upload: printable text only.
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export const CreateAssetRequest = z.object({
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
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')
    .default(''),
});

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
  const { assets } = deps;
  const app = new Hono<AuthEnv>();
  const invoker = requireAuth(deps.auth, 'invoke_function');
  const assetIdOf = (value: string) => uuidParam('assetId', value);

  app.post('/v2/nvcf/assets', invoker, async (c) => {
    const input = parseControlRequest(CreateAssetRequest, await readJsonBody(c.req.raw));
    return c.json(await assets.create(c.get('principal').subject, input, new URL(c.req.url).origin));
  });

  app.put('/v2/nvcf/assets/:assetId/upload', async (c) => {
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

  app.get('/v2/nvcf/assets', invoker, async (c) => {
    return c.json({ assets: (await assets.list(c.get('principal').subject)).map(summary) });
  });

  app.get('/v2/nvcf/assets/:assetId', invoker, async (c) => {
    const asset = await assets.get(c.get('principal').subject, assetIdOf(c.req.param('assetId')));
    return c.json({ asset: { ...summary(asset), createdAt: asset.createdAt } });
  });

  app.delete('/v2/nvcf/assets/:assetId', invoker, async (c) => {
    await assets.remove(c.get('principal').subject, assetIdOf(c.req.param('assetId')));
    return c.body(null, 204);
  });

  return app;
}
