import { AppError } from '@nvcf/protocol';
import type { Context } from 'hono';

/** The model and optional version a `/v2/models/{m}[/versions/{v}]/…` route names. */
export interface ModelPath {
  name: string;
  version: string | undefined;
}

/**
 * Reads `:model` and `:version` from a route. A version segment must be all digits, as Triton's URL
 * pattern requires (Triton HTTP server); anything else is a 400, not a 404.
 */
export function modelPath(c: Context): ModelPath {
  const name = c.req.param('model') ?? '';
  const version = c.req.param('version');
  if (version !== undefined && !/^\d+$/.test(version)) {
    throw new AppError('INVALID_ARGUMENT', `invalid model version '${version}': must be a non-negative integer`);
  }
  return { name, version };
}

/** Registers `path` both as `/v2/models/:model/<suffix>` and `/v2/models/:model/versions/:version/<suffix>`. */
export function modelRoutes(suffix: string): [string, string] {
  const tail = suffix === '' ? '' : `/${suffix}`;
  return [`/v2/models/:model${tail}`, `/v2/models/:model/versions/:version${tail}`];
}
