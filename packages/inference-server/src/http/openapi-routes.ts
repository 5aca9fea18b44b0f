import { apiReference } from '@nvcf/service-kit';
import { Hono } from 'hono';
import { openAPIRouteHandler } from 'hono-openapi';

/** Where the OpenAPI document is served. */
export const OPENAPI_PATH = '/openapi.json';
/** Where its interactive reference is served. */
export const DOCS_PATH = '/docs';

export const OPENAPI_TITLE = 'Inference server (Open Inference Protocol / KServe V2)';

const DESCRIPTION = `The worker's HTTP port: the Open Inference Protocol (KServe V2) REST API with Triton's extensions, and \
Triton's v1 API beside it. Generated from the routes' own annotations.

- **Errors** on \`/v2\` routes are \`{"error": "<message>"}\` with Triton's status for the error; an unknown path \
answers 404 \`{"error":"Not Found"}\`, a known shared memory path with the wrong method 405. Triton v1 routes answer \
400 with the code in \`NV-Status\` and the message as plain text.
- **Binary tensor data**: infer requests and responses may carry tensors as raw bytes after a JSON part whose \
length is \`Inference-Header-Content-Length\`.
- **Restricted APIs**: groups named in WORKER_RESTRICTED_API (Triton's \`--http-restricted-api\`) need their header, \
else 403. This document and /docs are never restricted.
- The port takes no NVCF credential: keep it inside the cluster; the gateway is the authenticated way in.`;

const TAGS = [
  { name: 'health', description: 'Liveness and readiness of the server and of each model.' },
  { name: 'metadata', description: 'Server and model metadata; model configuration (Triton extension).' },
  { name: 'inference', description: 'Inference, with the binary tensor data and classification extensions.' },
  { name: 'generate', description: 'Triton generate extension: plain JSON in and out, and server-sent events.' },
  { name: 'statistics', description: 'Triton statistics extension.' },
  { name: 'model repository', description: 'Triton model repository extension: index, load, unload.' },
  { name: 'shared memory', description: 'Triton shared memory extension: system (POSIX) and CUDA regions.' },
  { name: 'Triton v1', description: 'The legacy TRTIS 1.x HTTP API, on the same port and models.' },
];

/**
 * `GET /openapi.json` (OpenAPI 3.1, generated from the `describeRoute` annotations of `app`'s routes on first
 * request) and `GET /docs` (Scalar's interactive reference over it). Mount it on `app` itself; `version` is the
 * server's (as `GET /v2` reports it).
 */
export function openApiRoutes(app: Hono, version: string): Hono {
  const docs = new Hono();
  docs.get(
    OPENAPI_PATH,
    openAPIRouteHandler(app, {
      documentation: {
        info: { title: OPENAPI_TITLE, version, description: DESCRIPTION },
        externalDocs: {
          description: 'Open Inference Protocol REST specification',
          url: 'https://github.com/kserve/open-inference-protocol/blob/main/specification/protocol/inference_rest.md',
        },
        tags: TAGS,
      },
    }),
  );
  docs.route('/', apiReference({ path: DOCS_PATH, specUrl: OPENAPI_PATH, title: OPENAPI_TITLE }));
  return docs;
}
