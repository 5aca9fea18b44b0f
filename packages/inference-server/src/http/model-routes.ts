import { modelConfigToJson } from '@nvcf/models';
import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { InferenceCore } from '../core/core-types.ts';
import { modelPath, onModelRoutes } from './model-path.ts';
import { ModelConfigResponse, StatsModelResponse } from './openapi-extension-schemas.ts';
import { emptyResponse, errorResponses, jsonResponse, MODEL_ERRORS, RESTRICTED } from './openapi-responses.ts';
import { MetadataModelErrorResponse, MetadataModelResponse } from './openapi-schemas.ts';
import { probe } from './server-routes.ts';

const spec = (t: { name: string; datatype: string; shape: number[] }) => ({
  name: t.name,
  datatype: t.datatype,
  shape: t.shape,
});

/**
 * Per-model reads: metadata, readiness, config and statistics, each with and without `/versions/{v}`
 * (Open Inference Protocol REST; Triton model configuration extension; Triton statistics extension).
 */
export function modelInfoRoutes(core: InferenceCore): Hono {
  const app = new Hono();

  // Before `/v2/models/:model_name`, which would otherwise take "stats" for a model name (Triton does the same).
  app.get(
    '/v2/models/stats',
    describeRoute({
      tags: ['statistics'],
      summary: 'Statistics of every model',
      description: 'Triton statistics extension: one entry per loaded version.',
      responses: {
        200: jsonResponse('Every loaded version’s statistics.', StatsModelResponse),
        ...errorResponses({ 403: RESTRICTED }),
      },
    }),
    (c) => c.json({ model_stats: core.statistics() }),
  );

  const metadata = {
    tags: ['metadata'],
    summary: 'Model metadata',
    description: "The model's name, versions, platform, and its inputs' and outputs' names, datatypes and shapes.",
    responses: {
      200: jsonResponse('The model’s metadata; a shape has -1 for each variable dimension.', MetadataModelResponse),
      ...errorResponses(MODEL_ERRORS, MetadataModelErrorResponse),
    },
  };
  onModelRoutes(app, 'GET', '', metadata, (c) => {
    const { name, version } = modelPath(c);
    const m = core.modelMetadata(name, version);
    return c.json({
      name: m.name,
      versions: m.versions,
      platform: m.platform,
      inputs: m.inputs.map(spec),
      outputs: m.outputs.map(spec),
      ...(m.properties ? { parameters: m.properties } : {}),
    });
  });

  const ready = {
    tags: ['health'],
    summary: 'Model ready',
    description: 'Whether the model (that version, else its latest) is ready for inferencing.',
    responses: {
      200: emptyResponse('Ready.'),
      ...errorResponses({
        400: 'Not ready, or an unknown model: empty body. A version that is not a number: `{"error"}`.',
        403: RESTRICTED,
      }),
    },
  };
  onModelRoutes(app, 'GET', 'ready', ready, (c) => {
    const { name, version } = modelPath(c);
    return probe(core.isModelReady(name, version));
  });

  const config = {
    tags: ['metadata'],
    summary: 'Model configuration',
    description: 'Triton model configuration extension: the configuration the model was loaded with.',
    responses: { 200: jsonResponse('The ModelConfig.', ModelConfigResponse), ...errorResponses(MODEL_ERRORS) },
  };
  onModelRoutes(app, 'GET', 'config', config, (c) => {
    const { name, version } = modelPath(c);
    return c.json(modelConfigToJson(core.modelConfig(name, version)));
  });

  const stats = {
    tags: ['statistics'],
    summary: 'Model statistics',
    description: 'Triton statistics extension: counts and cumulative durations of the model’s loaded versions.',
    responses: { 200: jsonResponse('The statistics.', StatsModelResponse), ...errorResponses(MODEL_ERRORS) },
  };
  onModelRoutes(app, 'GET', 'stats', stats, (c) => {
    const { name, version } = modelPath(c);
    return c.json({ model_stats: core.statistics(name, version) });
  });
  return app;
}
