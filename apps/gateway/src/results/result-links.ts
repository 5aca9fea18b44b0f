import { AppError } from '@nvcf/protocol';
import type { Logger } from '@nvcf/service-kit';
import { type ObjectStore, type SigningSecret, signUrl, verifySignedUrl } from '@nvcf/storage';
import { Hono } from 'hono';
import { describeOperation } from '../http/openapi-operation.ts';
import { REQUEST_ID, SIGNED_URL_QUERY } from '../http/openapi-schemas.ts';
import { readableBody } from '../http/readable-body.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** How long a 302's Location stays valid (NVCF: presigned URLs "valid for at least 30 minutes"). */
const LINK_SECONDS = 60 * 60;
const resultPath = (requestId: string) => `/v2/nvcf/results/${requestId}`;

const getResult = describeOperation({
  tag: 'Results',
  operationId: 'getResult',
  summary: 'Download a stored large result',
  description:
    'The `Location` of a 302 from pexec or a status poll (or the exec envelope’s `responseReference`): a zip ' +
    'holding `<requestId>.response`, the function’s answer byte for byte. The signed URL is the credential; it ' +
    `expires after ${LINK_SECONDS / 60} minutes, the stored result after the worker's RESULT_OBJECT_TTL_SECONDS.`,
  parameters: [REQUEST_ID, ...SIGNED_URL_QUERY],
  responses: {
    200: {
      description: 'The zip, streamed (`Content-Disposition: attachment`).',
      content: { 'application/zip': {} },
    },
  },
  problems: {
    400: 'A request id that is not a UUID.',
    403: 'A missing, altered or expired signature.',
    404: 'The stored result is gone (expired).',
  },
});

export interface ResultLinks {
  /** The signed, expiring URL a 302 for this request's stored result points at. */
  url(requestId: string, requestOrigin: string): string;
  /** `GET /v2/nvcf/results/{requestId}?expires&signature`: the stored zip, no credential (the URL is it). */
  routes(): Hono;
}

/**
 * Large results (over the direct limit) are zips in the object store; clients reach them through a URL
 * the gateway signs (HMAC, expiring) and serves itself, as it does asset uploads.
 */
export function createResultLinks(opts: {
  objects: ObjectStore;
  signingSecret: SigningSecret;
  publicBaseUrl?: string;
  objectKey: (requestId: string) => string;
  logger: Logger;
}): ResultLinks {
  return {
    url(requestId, requestOrigin) {
      return signUrl(opts.signingSecret, {
        baseUrl: opts.publicBaseUrl ?? requestOrigin,
        method: 'GET',
        path: resultPath(requestId),
        expires: Math.floor(Date.now() / 1000) + LINK_SECONDS,
      });
    },
    routes() {
      const app = new Hono();
      app.get('/v2/nvcf/results/:requestId', getResult, async (c) => {
        const requestId = uuidParam('requestId', c.req.param('requestId'));
        const check = verifySignedUrl(opts.signingSecret, {
          method: 'GET',
          path: resultPath(requestId),
          expires: c.req.query('expires'),
          signature: c.req.query('signature'),
        });
        if (!check.ok) throw new AppError('PERMISSION_DENIED', `result URL refused: ${check.message}`);
        const object = await opts.objects.get(opts.objectKey(requestId));
        if (!object) throw new AppError('NOT_FOUND', `result of request '${requestId}' not found (expired)`);
        return new Response(readableBody(object.body, opts.logger, { requestId }), {
          headers: {
            'content-type': 'application/zip',
            'content-length': String(object.size),
            'content-disposition': `attachment; filename="${requestId}.zip"`,
          },
        });
      });
      return app;
    },
  };
}
