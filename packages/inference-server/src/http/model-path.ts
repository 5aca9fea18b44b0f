import { AppError } from '@nvcf/protocol';
import type { Context, Handler, Hono, MiddlewareHandler } from 'hono';
import { type DescribeRouteOptions, describeRoute } from 'hono-openapi';

/** The model and optional version a `/v2/models/{m}[/versions/{v}]/…` route names. */
export interface ModelPath {
  name: string;
  version: string | undefined;
}

/**
 * Reads `:model_name` and `:model_version` from a route. A version segment must be all digits, as Triton's URL
 * pattern requires (Triton HTTP server); anything else is a 400, not a 404.
 */
export function modelPath(c: Context): ModelPath {
  const name = c.req.param('model_name') ?? '';
  const version = c.req.param('model_version');
  if (version !== undefined && !/^\d+$/.test(version)) {
    throw new AppError('INVALID_ARGUMENT', `invalid model version '${version}': must be a non-negative integer`);
  }
  return { name, version };
}

/**
 * `/v2/models/:model_name/<suffix>` and `/v2/models/:model_name/versions/:model_version/<suffix>`, parameters
 * named as in the Open Inference Protocol REST spec.
 */
function modelRoutes(suffix: string): [string, string] {
  const tail = suffix === '' ? '' : `/${suffix}`;
  return [`/v2/models/:model_name${tail}`, `/v2/models/:model_name/versions/:model_version${tail}`];
}

const MODEL_NAME = {
  name: 'model_name',
  in: 'path',
  required: true,
  description: "The model's name in the repository.",
  schema: { type: 'string' },
} as const;

const MODEL_VERSION = {
  name: 'model_version',
  in: 'path',
  required: true,
  description: 'A version number; without the `/versions/…` segment the latest ready version answers.',
  schema: { type: 'string', pattern: '^[0-9]+$' },
} as const;

/**
 * Registers `handlers` on both `modelRoutes(suffix)` paths, each described for the OpenAPI document by `spec` and
 * the path parameters that path has.
 */
export function onModelRoutes(
  app: Hono,
  method: 'GET' | 'POST',
  suffix: string,
  spec: DescribeRouteOptions,
  ...handlers: (Handler | MiddlewareHandler)[]
): void {
  const [latest, versioned] = modelRoutes(suffix);
  const params = spec.parameters ?? [];
  app.on(method, latest, describeRoute({ ...spec, parameters: [MODEL_NAME, ...params] }), ...handlers);
  app.on(
    method,
    versioned,
    describeRoute({ ...spec, parameters: [MODEL_NAME, MODEL_VERSION, ...params] }),
    ...handlers,
  );
}
