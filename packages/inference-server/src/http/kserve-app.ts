import { accessLog, type Logger } from '@nvcf/service-kit';
import { Hono } from 'hono';
import type { RestrictedApis } from '../access/restricted-apis.ts';
import type { InferenceCore } from '../core/core-types.ts';
import { tritonV1Routes } from '../http-v1/triton-v1-routes.ts';
import { createSystemSharedMemory, type SystemSharedMemory } from '../shm/system-shared-memory.ts';
import type { TritonV1Options } from '../triton-v1/triton-v1-service.ts';
import { generateRoutes } from './generate-routes.ts';
import { inferRoute } from './infer-route.ts';
import { kserveError, kserveErrorHandler } from './kserve-error.ts';
import { modelInfoRoutes } from './model-routes.ts';
import { openApiRoutes } from './openapi-routes.ts';
import { repositoryRoutes } from './repository-routes.ts';
import { restrictHttpApis } from './restricted-api-middleware.ts';
import { serverRoutes } from './server-routes.ts';
import { sharedMemoryRoutes } from './shared-memory-routes.ts';

/** Triton's `--http-max-input-size` default (Triton HTTP server). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Per-tensor element limit when none is given, as parseInferRequest's default. */
export const DEFAULT_MAX_ELEMENTS = 2 ** 28;

export interface KserveHttpOptions extends Pick<TritonV1Options, 'strictReadiness' | 'serverId'> {
  logger: Logger;
  /** Largest request body, compressed or decompressed; default 64 MiB. */
  maxBodyBytes?: number;
  /** Largest element count of one input tensor, checked before anything is allocated. */
  maxElements?: number;
  /** The name `/v2/repository/{repo}/…` answers to; see RepositoryRouteOptions. */
  repositoryName?: string;
  /** Triton's `--http-restricted-api`: groups that need a header; default none restricted. */
  restrictedApis?: RestrictedApis;
  /** System shared memory regions, shared with the gRPC surface; default: a set of its own, clients allowed. */
  sharedMemory?: SystemSharedMemory;
}

/**
 * The KServe V2 / Triton HTTP surface (Open Inference Protocol REST; Triton protocol) over a transport-neutral core:
 * health and metadata, infer (JSON, binary tensor data, raw single input, classification), generate and
 * generate_stream (the way to decoupled models over HTTP), config,
 * statistics and the model repository extension; `GET /openapi.json` describes them all (OpenAPI 3.1, from the
 * routes' `describeRoute` annotations) and `GET /docs` renders it. Errors are `{"error": "..."}` with Triton's status
 * for their code; unknown routes are 404 `{"error":"Not Found"}`. Request bodies may be gzip or
 * deflate; successful infer responses (only those, as Triton) are compressed when `Accept-Encoding` asks. Every route serves the core as given, load and
 * unload included: a caller that must narrow what the network sees (model-control mode, private models) hands
 * in a core that does.
 *
 * @example
 * const app = createKserveHttpApp(core, { logger, maxBodyBytes: 64 << 20 });
 * const res = await app.request('/v2/health/ready'); // 200 once every model is loaded
 */
export function createKserveHttpApp(core: InferenceCore, opts: KserveHttpOptions): Hono {
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxElements = opts.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const app = new Hono();
  app.use(accessLog(opts.logger, 'debug'));
  const restrict = restrictHttpApis(opts.restrictedApis ?? new Map());
  app.use('/v2', restrict);
  app.use('/v2/*', restrict);
  app.route('/', serverRoutes(core));
  app.route('/', modelInfoRoutes(core));
  const sharedMemory = opts.sharedMemory ?? createSystemSharedMemory({ allowClientShm: true });
  app.route('/', inferRoute(core, { maxBodyBytes, maxElements, sharedMemory }));
  app.route('/', generateRoutes(core, { maxBodyBytes, maxElements }));
  app.route('/', sharedMemoryRoutes(sharedMemory));
  app.route(
    '/',
    repositoryRoutes(core, {
      maxBodyBytes,
      ...(opts.repositoryName !== undefined ? { repositoryName: opts.repositoryName } : {}),
    }),
  );
  app.route('/', tritonV1Routes(core, { ...opts, maxBodyBytes, maxElements, restrict }));
  // Outside `/v2` and `/api`, so no restriction applies: the description of the API is never secret.
  app.route('/', openApiRoutes(app, core.serverVersion));
  app.notFound(() => kserveError(404, 'Not Found'));
  app.onError(kserveErrorHandler(opts.logger));
  return app;
}
