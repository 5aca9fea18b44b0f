import { apiReference } from '@nvcf/service-kit';
import { Hono } from 'hono';
import { openAPIRouteHandler } from 'hono-openapi';
import pkg from '../../package.json' with { type: 'json' };
import { TAGS } from './openapi-operation.ts';

/** Where the OpenAPI document is served (no credential). */
export const OPENAPI_PATH = '/openapi.json';
/** Where its interactive reference is served (no credential). */
export const DOCS_PATH = '/docs';

export const OPENAPI_TITLE = 'Self-hosted NVIDIA Cloud Functions API';

const DESCRIPTION = `NVIDIA Cloud Functions' API, self-hosted: invocation (pexec with long polling, server-sent events, \
the exec envelope), functions, deployments, queues, assets, and this gateway's API keys. Generated from the \
routes' own annotations.

- **Credentials**: every route but \`/health\`, signed URLs and this document takes \`Authorization: Bearer <credential>\`: \
an API key (\`nvapi-…\`) or an HS256 JWT (\`sub\`, \`exp\`, \`scope\`, optional \`function_ids\`). Each operation names \
the scope it needs; a key or token restricted to some functions gets 403 for the others.
- **Long polling**: pexec and status polls wait up to \`NVCF-POLL-SECONDS\` for the result: 200 with the function's \
answer, 202 (\`NVCF-REQID\`, \`NVCF-STATUS\`, \`NVCF-PERCENT-COMPLETE\`) to poll again, or 302 to a signed zip for a \
result over the direct limit. A result is delivered once: afterwards its id answers 404.
- **Streaming**: \`Accept: text/event-stream\` on pexec or a status poll streams the function's events.
- **Errors** are RFC 7807 \`application/problem+json\` with NVCF's fields. A request whose headers and body do not \
arrive within the gateway's body timeout is answered 408 (no body) and closed; unknown paths answer 404 problem+json.
- **gRPC**: KServe V2 \`ModelInfer\` for functions is served on the gateway's gRPC port (not described here).`;

/**
 * `GET /openapi.json` (OpenAPI 3.1, generated on first request from the `describeRoute` annotations of `app`'s
 * routes) and `GET /docs` (Scalar's interactive reference over it). Mount it on `app` itself.
 */
export function openApiRoutes(app: Hono): Hono {
  const docs = new Hono();
  docs.get(
    OPENAPI_PATH,
    openAPIRouteHandler(app, {
      documentation: {
        info: { title: OPENAPI_TITLE, version: pkg.version, description: DESCRIPTION },
        // Relative: the document is right wherever the gateway is reached (a proxy, a path prefix).
        servers: [{ url: '/' }],
        externalDocs: {
          description: 'NVIDIA Cloud Functions API reference',
          url: 'https://docs.nvidia.com/cloud-functions/user-guide/latest/cloud-function/api.html',
        },
        tags: TAGS.map((t) => ({ ...t })),
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'nvapi-…',
              description:
                'An API key (`nvapi-…`), created by `pnpm keys create`, `POST /v2/nvcf/keys`, or the bootstrap admin ' +
                'key. It holds scopes and optionally a list of functions.',
            },
            jwtBearer: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description:
                'An HS256 JWT signed with the gateway’s NVCF_JWT_SECRET: `sub` (required: the principal), `exp` (at ' +
                'most NVCF_JWT_MAX_TTL_SECONDS after `iat`), `scope` (space-separated or an array) and optionally ' +
                '`function_ids` (an array).',
            },
          },
        },
      },
    }),
  );
  docs.route('/', apiReference({ path: DOCS_PATH, specUrl: OPENAPI_PATH, title: OPENAPI_TITLE }));
  return docs;
}
