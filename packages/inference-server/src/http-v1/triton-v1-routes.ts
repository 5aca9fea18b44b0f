import { AppError, isAppError } from '@nvcf/protocol';
import { type Logger, nodeIncoming, readRequestBody } from '@nvcf/service-kit';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { InferenceCore } from '../core/core-types.ts';
import { isServerFault } from '../triton-v1/request-status.ts';
import { createTritonV1Service, type TritonV1Options, type TritonV1Service } from '../triton-v1/triton-v1-service.ts';
import { parseV1Text } from '../triton-v1/v1-codec.ts';
import type { InferRequestHeaderMsg } from '../triton-v1/v1-messages.ts';
import { bodyFormat, nvEmpty, nvError, nvInferResponse, nvMessage } from './v1-http-responses.ts';
import { v1Health, v1Infer, v1ModelControl, v1RepositoryIndex, v1Status } from './v1-openapi.ts';

export interface TritonV1HttpOptions extends TritonV1Options {
  logger: Logger;
  /** Largest infer body, compressed or decompressed; default 64 MiB (the V2 routes' limit). */
  maxBodyBytes?: number;
  /** A service to share (request ids, endpoint statistics) with the v1 gRPC surface; default a new one. */
  service?: TritonV1Service;
  /** Runs before every `/api/*` route (restricted APIs); what it throws is answered in v1's shape. */
  restrict?: MiddlewareHandler;
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The legacy Triton v1 HTTP API (TRTIS 1.x API) beside KServe V2 on the same port and core: health,
 * status (text, binary, JSON), infer with `NV-InferRequest`, model control and the repository index. Every answer
 * carries `NV-Status`; failures are 400 with the v1 code in it and the message as a plain-text body.
 *
 * @example
 * app.route('/', tritonV1Routes(core, { logger, strictReadiness: true }));
 * // GET /api/status/simple?format=binary → a ServerStatus in the protobuf wire format
 */
export function tritonV1Routes(core: InferenceCore, opts: TritonV1HttpOptions): Hono {
  const v1 = opts.service ?? createTritonV1Service(core, opts);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = new Hono();
  if (opts.restrict) app.use('/api/*', opts.restrict);

  app.get('/api/health/:mode', v1Health, (c) => {
    const ok = v1.health(c.req.param('mode'));
    // Not live / not ready is no error: 400 with code SUCCESS (TRTIS 1.x API).
    return nvEmpty(v1.requestStatus(), ok ? 200 : 400);
  });

  const status = async (c: Context) => {
    const format = bodyFormat(c, ['text', 'binary', 'json']);
    const message = await v1.status(c.req.param('model'));
    return nvMessage(v1.requestStatus(), 'ServerStatus', message, format);
  };
  app.get('/api/status', v1Status(false), status);
  app.get('/api/status/:model', v1Status(true), status);

  const infer = async (c: Context) => {
    const text = c.req.header('nv-inferrequest');
    if (text === undefined) {
      throw new AppError('INVALID_ARGUMENT', 'missing NV-InferRequest header: it must hold the InferRequestHeader');
    }
    const format = bodyFormat(c, ['text', 'binary']) as 'text' | 'binary';
    const version = urlVersion(c.req.param('version'));
    const header = parseV1Text('InferRequestHeader', text, 'NV-InferRequest') as InferRequestHeaderMsg;
    const raw = await readRequestBody(c.req.raw, maxBodyBytes, nodeIncoming(c.env));
    const model = c.req.param('model') ?? '';
    const signal = c.req.raw.signal;
    const result = await v1.infer({ model, ...(version !== undefined ? { version } : {}), header, raw, signal });
    return nvInferResponse(v1.requestStatus(), result, format);
  };
  app.post('/api/infer/:model', v1Infer(false), infer);
  app.post('/api/infer/:model/:version', v1Infer(true), infer);

  app.post('/api/modelcontrol/:action{load|unload}/:model', v1ModelControl, async (c) => {
    await v1.modelControl(c.req.param('action') as 'load' | 'unload', c.req.param('model'));
    return nvEmpty(v1.requestStatus());
  });

  app.post('/api/repository/index', v1RepositoryIndex, async (c) => {
    const format = bodyFormat(c, ['text', 'binary', 'json']);
    return nvMessage(v1.requestStatus(), 'ModelRepositoryIndex', await v1.repositoryIndex(), format);
  });

  app.all('/api/sharedmemorycontrol/*', () => {
    throw new AppError('UNIMPLEMENTED', 'shared memory is not supported by this server');
  });
  app.all('/api/*', (c) => {
    throw new AppError('NOT_FOUND', `no v1 endpoint ${c.req.method} ${c.req.path}`);
  });

  app.onError((err, c) => {
    if (isServerFault(err)) opts.logger.error({ err, method: c.req.method, path: c.req.path }, 'v1 request failed');
    // The rest of an over-size body is never read: the connection cannot carry another request.
    const close = isAppError(err) && err.code === 'PAYLOAD_TOO_LARGE' ? { connection: 'close' } : undefined;
    return nvError(v1.requestStatus(err), close);
  });
  return app;
}

/** The URL's version: digits, or -1 / absent for the latest ready version (v1's convention). */
function urlVersion(version: string | undefined): string | undefined {
  if (version === undefined || version === '-1') return undefined;
  if (!/^\d+$/.test(version)) {
    throw new AppError('INVALID_ARGUMENT', `invalid model version '${version}': must be a non-negative integer or -1`);
  }
  return version;
}
