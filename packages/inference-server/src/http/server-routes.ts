import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { InferenceCore } from '../core/core-types.ts';
import { emptyResponse, errorResponses, jsonResponse, RESTRICTED } from './openapi-responses.ts';
import { MetadataServerErrorResponse, MetadataServerResponse } from './openapi-schemas.ts';

/** 200 or 400, empty body: what Triton answers health and readiness probes with (Open Inference Protocol REST). */
export const probe = (ok: boolean) => new Response(null, { status: ok ? 200 : 400 });

const probeSpec = (summary: string, description: string, yes: string, no: string) =>
  describeRoute({
    tags: ['health'],
    summary,
    description,
    responses: { 200: emptyResponse(yes), 400: emptyResponse(no), ...errorResponses({ 403: RESTRICTED }) },
  });

/** `GET /v2` (server metadata), `/v2/health/live`, `/v2/health/ready`. */
export function serverRoutes(core: InferenceCore): Hono {
  const app = new Hono();
  app.get(
    '/v2',
    describeRoute({
      tags: ['metadata'],
      summary: 'Server metadata',
      description: "The server's name, version and the protocol extensions it supports.",
      responses: {
        200: jsonResponse('The server metadata.', MetadataServerResponse),
        ...errorResponses({ 403: RESTRICTED }, MetadataServerErrorResponse),
      },
    }),
    (c) => c.json({ name: core.serverName, version: core.serverVersion, extensions: [...core.extensions] }),
  );
  app.get(
    '/v2/health/live',
    probeSpec(
      'Server live',
      'Whether the server can receive and answer requests: a Kubernetes livenessProbe.',
      'Live.',
      'Not live.',
    ),
    () => probe(core.isLive()),
  );
  app.get(
    '/v2/health/ready',
    probeSpec(
      'Server ready',
      'Whether the server has loaded its repository, every model without failure: a Kubernetes readinessProbe.',
      'Ready.',
      'Not ready.',
    ),
    () => probe(core.isReady()),
  );
  return app;
}
