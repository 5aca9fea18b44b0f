import { AppError } from '@nvcf/protocol';
import { type Context, Hono } from 'hono';
import { type DescribeRouteOptions, describeRoute } from 'hono-openapi';
import type { InferenceCore, LoadOptions } from '../core/core-types.ts';
import { parametersOf, readOptionalJsonObject } from './json-body.ts';
import {
  RepositoryIndexRequest,
  RepositoryIndexResponse,
  RepositoryLoadRequest,
  RepositoryUnloadRequest,
} from './openapi-extension-schemas.ts';
import {
  emptyResponse,
  errorResponses,
  jsonContent,
  jsonResponse,
  RESTRICTED,
  TOO_LARGE,
} from './openapi-responses.ts';

export interface RepositoryRouteOptions {
  maxBodyBytes: number;
  /**
   * The name `/v2/repository/{repo}/…` accepts for the one repository this server serves (usually the
   * directory's base name). Other names, or any name when unset, are refused with a 400, as Triton
   * refuses repository names it does not know.
   */
  repositoryName?: string;
}

const REPOSITORY_NAME = {
  name: 'repository_name',
  in: 'path',
  required: true,
  description: "The repository directory's name; any other is refused.",
  schema: { type: 'string' },
} as const;

const MODEL_NAME = {
  name: 'model_name',
  in: 'path',
  required: true,
  description: "The model's directory name in the repository.",
  schema: { type: 'string' },
} as const;

/** The operation under both paths: `/v2/repository/…` and `/v2/repository/{repository_name}/…`. */
const described = (spec: DescribeRouteOptions, named: boolean, model: boolean) =>
  describeRoute({
    tags: ['model repository'],
    ...spec,
    parameters: [...(named ? [REPOSITORY_NAME] : []), ...(model ? [MODEL_NAME] : [])],
  });

const ERRORS = { 403: RESTRICTED, 413: TOO_LARGE } as const;

const indexSpec: DescribeRouteOptions = {
  summary: 'Repository index',
  description: 'Triton model repository extension: every model in the repository, with its state.',
  requestBody: { required: false, content: jsonContent(RepositoryIndexRequest) },
  responses: {
    200: jsonResponse('The models, each version that has a state.', RepositoryIndexResponse),
    ...errorResponses({ ...ERRORS, 400: 'A malformed body, or an unknown repository name.' }),
  },
};

const loadSpec: DescribeRouteOptions = {
  summary: 'Load a model',
  description:
    'Triton model repository extension: loads (or reloads) the model, with the configuration override if given.',
  requestBody: { required: false, content: jsonContent(RepositoryLoadRequest) },
  responses: {
    200: emptyResponse('Loaded.'),
    ...errorResponses({
      ...ERRORS,
      400: 'A malformed body or parameter, an unknown repository name, or an invalid model name.',
      500: 'The model is not in the repository or failed to load; a loaded one goes on serving its previous versions.',
      503: 'Model control is not enabled (the worker: WORKER_MODEL_CONTROL_MODE is not explicit).',
    }),
  },
};

const unloadSpec: DescribeRouteOptions = {
  summary: 'Unload a model',
  description: 'Triton model repository extension: unloads every version of the model.',
  requestBody: { required: false, content: jsonContent(RepositoryUnloadRequest) },
  responses: {
    200: emptyResponse('Unloaded.'),
    ...errorResponses({
      ...ERRORS,
      400: 'A malformed body or parameter, or an unknown repository name.',
      503: 'Model control is not enabled (the worker: WORKER_MODEL_CONTROL_MODE is not explicit).',
    }),
  },
};

/**
 * Triton's model repository extension (Triton model repository extension): index, load, unload, on
 * the unnamed repository and under `/v2/repository/{repo}/…`.
 */
export function repositoryRoutes(core: InferenceCore, opts: RepositoryRouteOptions): Hono {
  const app = new Hono();

  const checkRepository = (c: Context) => {
    const repo = c.req.param('repository_name');
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
  app.post('/v2/repository/index', described(indexSpec, false, false), index);
  app.post('/v2/repository/:repository_name/index', described(indexSpec, true, false), index);

  const load = async (c: Context) => {
    checkRepository(c);
    const name = c.req.param('model_name') ?? '';
    const body = await readOptionalJsonObject(c.req.raw, opts.maxBodyBytes, 'load request');
    await core.loadModel(name, loadOptions(parametersOf(body, 'load request')));
    return new Response(null, { status: 200 });
  };
  app.post('/v2/repository/models/:model_name/load', described(loadSpec, false, true), load);
  app.post('/v2/repository/:repository_name/models/:model_name/load', described(loadSpec, true, true), load);

  const unload = async (c: Context) => {
    checkRepository(c);
    const name = c.req.param('model_name') ?? '';
    const body = await readOptionalJsonObject(c.req.raw, opts.maxBodyBytes, 'unload request');
    const dependents = parametersOf(body, 'unload request').unload_dependents;
    if (dependents !== undefined && typeof dependents !== 'boolean') {
      throw new AppError('INVALID_ARGUMENT', "unload request: 'unload_dependents' must be a boolean");
    }
    // No ensembles here, so a model never has dependents: the flag needs no action.
    await core.unloadModel(name);
    return new Response(null, { status: 200 });
  };
  app.post('/v2/repository/models/:model_name/unload', described(unloadSpec, false, true), unload);
  app.post('/v2/repository/:repository_name/models/:model_name/unload', described(unloadSpec, true, true), unload);
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
