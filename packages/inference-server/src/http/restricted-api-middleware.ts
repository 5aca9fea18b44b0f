import { AppError } from '@nvcf/protocol';
import type { MiddlewareHandler } from 'hono';
import {
  httpRestrictedMessage,
  type RestrictedApiGroup,
  type RestrictedApis,
  unmetRestriction,
} from '../access/restricted-apis.ts';

const MODEL_ROUTE = /^\/v2\/models\/[^/]+(?:\/versions\/[^/]+)?(\/.*)?$/;

const MODEL_SUFFIX: Readonly<Record<string, RestrictedApiGroup>> = {
  '': 'metadata',
  '/ready': 'health',
  '/infer': 'inference',
  '/generate': 'inference',
  '/generate_stream': 'inference',
  '/config': 'model-config',
  '/stats': 'statistics',
  '/trace/setting': 'trace',
};

const PREFIXES: readonly [string, readonly RestrictedApiGroup[]][] = [
  ['/v2/health', ['health']],
  ['/v2/repository', ['model-repository']],
  ['/v2/systemsharedmemory', ['shared-memory']],
  ['/v2/cudasharedmemory', ['shared-memory']],
  ['/v2/trace', ['trace']],
  ['/v2/logging', ['logging']],
  // Triton v1: its status carries every model's metadata, config and statistics.
  ['/api/health', ['health']],
  ['/api/status', ['metadata', 'model-config', 'statistics']],
  ['/api/infer', ['inference']],
  ['/api/modelcontrol', ['model-repository']],
  ['/api/repository', ['model-repository']],
  ['/api/sharedmemorycontrol', ['shared-memory']],
];

/**
 * The API groups a request path belongs to, as Triton's HTTP router files them (`/v2/models/stats` is
 * statistics; a model's `ready` is health). A path in no group is never restricted.
 */
export function httpApiGroups(path: string): readonly RestrictedApiGroup[] {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (p === '/v2') return ['metadata'];
  if (p === '/v2/models/stats') return ['statistics'];
  const model = MODEL_ROUTE.exec(p);
  if (model) {
    const group = MODEL_SUFFIX[model[1] ?? ''];
    return group ? [group] : [];
  }
  for (const [prefix, groups] of PREFIXES) {
    if (p === prefix || p.startsWith(`${prefix}/`)) return groups;
  }
  return [];
}

/**
 * Triton's `--http-restricted-api`: a request to a restricted group without its header (and value) is
 * refused before anything else is read, with Triton's 403 and wording. Thrown as an AppError so that each
 * surface renders it in its own shape (`{"error"}` on KServe routes, NV-Status on v1 routes).
 */
export function restrictHttpApis(restrictions: RestrictedApis): MiddlewareHandler {
  return async (c, next) => {
    if (restrictions.size > 0) {
      const unmet = unmetRestriction(restrictions, httpApiGroups(c.req.path), (h) => c.req.header(h));
      if (unmet) throw new AppError('PERMISSION_DENIED', httpRestrictedMessage(unmet.header));
    }
    await next();
  };
}
