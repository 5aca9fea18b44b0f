import { type ResponsesWithResolver, resolver } from 'hono-openapi';
import type { z } from 'zod';
import { ErrorResponse } from './openapi-schemas.ts';

/**
 * Building blocks for the routes' `describeRoute` annotations: JSON bodies, `{"error"}` answers with the reasons
 * each status has on a route, and the reasons every route of a kind shares.
 */

/** A JSON body of `schema`. */
export const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema: resolver(schema) } });

/** A response with a JSON body. */
export const jsonResponse = (description: string, schema: z.ZodType) => ({
  description,
  content: jsonContent(schema),
});

/** An empty-bodied response. */
export const emptyResponse = (description: string) => ({ description: `${description} Empty body.` });

/**
 * Error answers, `{"error": "…"}` (KServe V2), by status with the reasons a route has for each; `schema` names the
 * error object as the spec does for the route, else `error_response`.
 */
export function errorResponses(
  reasons: Readonly<Record<number, string>>,
  schema: z.ZodType = ErrorResponse,
): ResponsesWithResolver {
  const out: ResponsesWithResolver = {};
  for (const [status, description] of Object.entries(reasons)) out[status] = jsonResponse(description, schema);
  return out;
}

/** Why any `/v2/…` route in a restricted group answers 403. */
export const RESTRICTED =
  'The API group is restricted (`--http-restricted-api`, WORKER_RESTRICTED_API) and the request lacks its header.';

/** Why a route that reads a body answers 413. */
export const TOO_LARGE = 'The body, compressed or decompressed, exceeds the size limit; the connection is closed.';

/** The reasons a per-model route answers an error before the model is asked anything. */
export const MODEL_ERRORS = {
  400: 'Unknown model, or a version that is not a number.',
  403: RESTRICTED,
  503: 'The requested version is not ready.',
} as const;
