import { PROBLEM_CONTENT_TYPE, type Scope } from '@nvcf/protocol';
import type { MiddlewareHandler } from 'hono';
import { type DescribeRouteOptions, describeRoute, type ResponsesWithResolver, resolver } from 'hono-openapi';
import type { z } from 'zod';
import { Problem, type ResponseHeaderName, responseHeaders } from './openapi-schemas.ts';

/**
 * One builder for every operation of the gateway's OpenAPI document, so that each route states only what is its
 * own: what it answers, and why each error status can happen on it. The credential (401), the scope (403) and
 * Redis (503) are the same on every authenticated route and are added here.
 */

/** Tags, in the order the reference shows them. */
export const TAGS = [
  { name: 'Function Invocation', description: 'pexec: invoke a function, long-poll its status, stream it, cancel it.' },
  { name: 'Envelope Function Invocation', description: 'The legacy exec envelope.' },
  { name: 'Function Management', description: 'Create, list, update and delete functions and their versions.' },
  { name: 'Function Deployment', description: 'Deploy and undeploy function versions.' },
  {
    name: 'Authorized Accounts',
    description: 'Share a function with other accounts (NVIDIA Cloud Accounts): who besides its owner may invoke it.',
  },
  { name: 'User Secret Management', description: 'Set a function version’s secrets (never read back).' },
  { name: 'Queue Details', description: 'Queue depths and a request’s position.' },
  { name: 'Cluster Groups and GPUs', description: 'The worker pools that can run functions, from live workers.' },
  { name: 'Asset Management', description: 'Large inputs: create, upload, list, read and delete assets.' },
  { name: 'Results', description: 'Stored large results (the target of a 302).' },
  { name: 'API Keys', description: 'Manage the API keys of this gateway (ours: NVCF manages keys elsewhere).' },
  { name: 'Health', description: 'Liveness of the gateway and its Redis.' },
] as const;
type Tag = (typeof TAGS)[number]['name'];

/** The problem+json statuses the gateway answers (`AppError` codes, mapped once in packages/protocol). */
type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 499 | 500 | 503;

export interface OperationSpec {
  tag: Tag;
  summary: string;
  description?: string;
  operationId: string;
  /** Scopes of which the credential must hold one; absent: the route takes no credential. */
  scopes?: readonly Scope[];
  parameters?: DescribeRouteOptions['parameters'];
  requestBody?: DescribeRouteOptions['requestBody'];
  /** What the route answers besides problem+json. */
  responses: ResponsesWithResolver;
  /**
   * Why the route can answer each problem+json status. 401, 503 and the scope's 403 are added for a route with
   * `scopes`; a 403 given here adds to the scope's reason. Headers the problem carries beyond Retry-After and
   * WWW-Authenticate (which are added where they apply) go in `problemHeaders`.
   */
  problems?: Partial<Record<ProblemStatus, string>>;
  problemHeaders?: Partial<Record<ProblemStatus, readonly ResponseHeaderName[]>>;
}

/** Reasons many routes share. */
export const Reason = {
  notUuid: 'A path id that is not a UUID.',
  badJson: 'The body is not JSON, or not a valid request (the detail names the field, in NVCF’s words).',
  controlTooLarge: 'The body is over 1 MiB; the connection is closed.',
  functionNotAllowed: 'The credential is restricted to other functions.',
  notOwner:
    'The function belongs to another account that shared it with the caller’s: only its owner may change it. Or: ' +
    'the credential is restricted to other functions.',
  notVisible: 'Or another account’s function not shared with the caller’s account.',
  redis: 'Redis (the request store) is unreachable, not answering or full; nothing was lost, try again.',
} as const;

const REDIS_DOWN = 503;

/** A JSON body of `schema`. */
export const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema: resolver(schema) } });

/** A response with a JSON body. */
export const jsonResponse = (description: string, schema: z.ZodType) => ({
  description,
  content: jsonContent(schema),
});

const problemContent = () => ({ [PROBLEM_CONTENT_TYPE]: { schema: resolver(Problem) } });

function problemResponse(status: ProblemStatus, description: string, extra: readonly ResponseHeaderName[] = []) {
  const required: ResponseHeaderName[] = [];
  if (status === 401) required.push('WWW-Authenticate');
  if (status === 429 || status === 503) required.push('Retry-After');
  const headers = responseHeaders(required, extra);
  return {
    description,
    content: problemContent(),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

type Headers = ReturnType<typeof responseHeaders>;

/** The headers of two shapes of one status: one that only one shape sends is optional. */
function eitherHeaders(a: Headers = {}, b: Headers = {}): Headers {
  const out: Headers = {};
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[name];
    const y = b[name];
    const header = x ?? y;
    if (!header || '$ref' in header) continue;
    const both = x && y && !('$ref' in x) && !('$ref' in y) && x.required === true && y.required === true;
    out[name] = { ...header, required: both === true };
  }
  return out;
}

const scopeList = (scopes: readonly Scope[]) => scopes.map((s) => `\`${s}\``).join(' or ');

/**
 * The `describeRoute` options of an operation: security (an API key or a token holding one of `scopes`, as
 * OpenAPI 3.1 scope lists), the scope named in the description, and every problem+json answer.
 */
function operation(spec: OperationSpec): DescribeRouteOptions {
  const reasons: Partial<Record<ProblemStatus, string>> = { ...spec.problems };
  const scopes = spec.scopes;
  if (scopes) {
    reasons[401] = 'No credential, or an unknown, revoked or expired one, or a token with invalid claims.';
    const lacking = `The credential holds none of ${scopeList(scopes)}.`;
    reasons[403] = spec.problems?.[403] ? `${lacking} ${spec.problems[403]}` : lacking;
    reasons[REDIS_DOWN] = spec.problems?.[REDIS_DOWN] ?? Reason.redis;
  }
  const responses: ResponsesWithResolver = { ...spec.responses };
  for (const [key, description] of Object.entries(reasons)) {
    const status = Number(key) as ProblemStatus;
    const problem = problemResponse(status, description, spec.problemHeaders?.[status]);
    const own = responses[key];
    // A status the route also answers in another shape (the exec envelope relays a function's failure as JSON).
    responses[key] =
      own && !('$ref' in own)
        ? {
            ...own,
            description: `${own.description} Or, as problem+json: ${description}`,
            content: { ...own.content, ...problem.content },
            headers: eitherHeaders(own.headers, problem.headers),
          }
        : problem;
  }
  const scopeNote = scopes
    ? `**Scope:** ${scopeList(scopes)} (an API key or a token holding it).`
    : '**No credential** (none is read).';
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description ? `${spec.description}\n\n${scopeNote}` : scopeNote,
    operationId: spec.operationId,
    security: (scopes ?? []).flatMap((s): Record<string, string[]>[] => [{ bearerAuth: [s] }, { jwtBearer: [s] }]),
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses,
  };
}

/** `describeRoute(operation(spec))`: the middleware that carries a route's entry in the OpenAPI document. */
export function describeOperation(spec: OperationSpec): MiddlewareHandler {
  return describeRoute(operation(spec));
}
