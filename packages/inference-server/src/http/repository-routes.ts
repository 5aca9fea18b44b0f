import { AppError } from '@nvcf/protocol';
import { type Context, Hono } from 'hono';
import type { InferenceCore, LoadOptions } from '../core/core-types.ts';
import { parametersOf, readOptionalJsonObject } from './json-body.ts';

export interface RepositoryRouteOptions {
  maxBodyBytes: number;
  /**
   * The name `/v2/repository/{repo}/…` accepts for the one repository this server serves (usually the
   * directory's base name). Other names, or any name when unset, are refused with a 400, as Triton
   * refuses repository names it does not know.
   */
  repositoryName?: string;
}

/**
 * Triton's model repository extension (Triton model repository extension): index, load, unload, on
 * the unnamed repository and under `/v2/repository/{repo}/…`.
 */
export function repositoryRoutes(core: InferenceCore, opts: RepositoryRouteOptions): Hono {
  const app = new Hono();

  const checkRepository = (c: Context) => {
    const repo = c.req.param('repo');
    if (repo !== undefined && repo !== opts.repositoryName) {
      throw new AppError('INVALID_ARGUMENT', `Request for unknown repository: '${repo}'`);
    }
  };

  const index = async (c: Context) => {
    checkRepository(c);
    const body = await readOptionalJsonObject(c.req.raw, opts.maxBodyBytes, 'repository index request');
    const ready = body?.ready;
    if (ready !== undefined && typeof ready !== 'boolean') {
      throw new AppError('INVALID_ARGUMENT', "repository index request: 'ready' must be a boolean");
    }
    const entries = await core.repositoryIndex({ readyOnly: ready === true });
    return c.json(entries);
  };
  app.post('/v2/repository/index', index);
  app.post('/v2/repository/:repo/index', index);

  const load = async (c: Context) => {
    checkRepository(c);
    const name = c.req.param('model') ?? '';
    const body = await readOptionalJsonObject(c.req.raw, opts.maxBodyBytes, 'load request');
    await core.loadModel(name, loadOptions(parametersOf(body, 'load request')));
    return new Response(null, { status: 200 });
  };
  app.post('/v2/repository/models/:model/load', load);
  app.post('/v2/repository/:repo/models/:model/load', load);

  const unload = async (c: Context) => {
    checkRepository(c);
    const name = c.req.param('model') ?? '';
    const body = await readOptionalJsonObject(c.req.raw, opts.maxBodyBytes, 'unload request');
    const dependents = parametersOf(body, 'unload request').unload_dependents;
    if (dependents !== undefined && typeof dependents !== 'boolean') {
      throw new AppError('INVALID_ARGUMENT', "unload request: 'unload_dependents' must be a boolean");
    }
    // No ensembles here, so a model never has dependents: the flag needs no action.
    await core.unloadModel(name);
    return new Response(null, { status: 200 });
  };
  app.post('/v2/repository/models/:model/unload', unload);
  app.post('/v2/repository/:repo/models/:model/unload', unload);
  return app;
}

/** Load parameters: `config` (a ModelConfig JSON string) only; `file:` overrides are not supported yet. */
function loadOptions(parameters: Record<string, unknown>): LoadOptions {
  const opts: LoadOptions = {};
  for (const [key, value] of Object.entries(parameters)) {
    if (key === 'config') {
      if (typeof value !== 'string') {
        throw new AppError('INVALID_ARGUMENT', "Invalid config override: 'config' must be a JSON string");
      }
      opts.configOverride = value;
    } else if (key.startsWith('file:')) {
      throw new AppError('INVALID_ARGUMENT', `load parameter '${key}': file overrides are not supported`);
    } else {
      throw new AppError('INVALID_ARGUMENT', `Unrecognized load parameter '${key}'`);
    }
  }
  return opts;
}
