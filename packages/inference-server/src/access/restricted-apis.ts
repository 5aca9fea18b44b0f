import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The API groups Triton's `--http-restricted-api` / `--grpc-restricted-protocol` name (Triton inference
 * protocols: Limit Endpoint Access): each covers a family of endpoints on every surface.
 */
export const RESTRICTED_API_GROUPS = [
  'health',
  'metadata',
  'inference',
  'shared-memory',
  'model-config',
  'model-repository',
  'statistics',
  'trace',
  'logging',
] as const;
export type RestrictedApiGroup = (typeof RESTRICTED_API_GROUPS)[number];

/** The header (HTTP) a group needs, lower-cased, and the value it must carry. */
export interface Restriction {
  header: string;
  value: string;
}

/** Which groups are restricted, and how. A group absent from the map is open. */
export type RestrictedApis = ReadonlyMap<RestrictedApiGroup, Restriction>;

/** Triton prefixes the restricted key on gRPC, where bare metadata keys may clash with gRPC's own. */
export const GRPC_RESTRICTED_PREFIX = 'triton-grpc-protocol-';

const HEADER_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/**
 * Parses Triton's `<api>,<api>,…:<key>=<value>` form; several specs are separated by `;` (Triton repeats the
 * flag instead). An API may appear in one spec only, as in Triton.
 *
 * @example
 * parseRestrictedApis('model-repository,model-config:x-admin-key=s3cret');
 * // Map { 'model-repository' => { header: 'x-admin-key', value: 's3cret' }, 'model-config' => … }
 * @throws Error naming what is wrong with the text.
 */
export function parseRestrictedApis(text: string): RestrictedApis {
  const out = new Map<RestrictedApiGroup, Restriction>();
  for (const spec of text.split(';').map((s) => s.trim())) {
    if (spec === '') continue;
    const colon = spec.lastIndexOf(':', spec.indexOf('='));
    const eq = spec.indexOf('=');
    if (colon < 0 || eq < colon) throw new Error(`'${spec}' is not of the form <api>,<api>,…:<key>=<value>`);
    const header = spec
      .slice(colon + 1, eq)
      .trim()
      .toLowerCase();
    const value = spec.slice(eq + 1);
    if (!HEADER_NAME.test(header)) throw new Error(`'${header}' is not a valid header name`);
    if (value === '') throw new Error(`the value for '${header}' must not be empty`);
    for (const api of spec
      .slice(0, colon)
      .split(',')
      .map((a) => a.trim())) {
      if (!isGroup(api)) throw new Error(`unknown API '${api}': expected one of ${RESTRICTED_API_GROUPS.join(', ')}`);
      if (out.has(api)) throw new Error(`API '${api}' is named in more than one restriction`);
      out.set(api, { header, value });
    }
  }
  return out;
}

function isGroup(api: string): api is RestrictedApiGroup {
  return (RESTRICTED_API_GROUPS as readonly string[]).includes(api);
}

/**
 * The first restriction among `groups` that the request does not satisfy, or undefined when it may proceed.
 * `read` returns the request's value for a header (or metadata key).
 */
export function unmetRestriction(
  restrictions: RestrictedApis,
  groups: readonly RestrictedApiGroup[],
  read: (header: string) => string | undefined,
): Restriction | undefined {
  for (const group of groups) {
    const r = restrictions.get(group);
    if (r && !sameSecret(read(r.header), r.value)) return r;
  }
  return undefined;
}

/** Compares digests so that the time taken says nothing about how much of the secret matched. */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Triton's HTTP answer (403) for a restricted API called without its header. */
export const httpRestrictedMessage = (header: string) => `This API is restricted, expecting header '${header}'`;

/** Triton's gRPC answer (UNAVAILABLE) for a restricted protocol called without its metadata. */
export const grpcRestrictedMessage = (header: string) =>
  `This protocol is restricted, expecting header '${GRPC_RESTRICTED_PREFIX}${header}'`;
