import { modelConfigToJson } from '@nvcf/models';
import { Hono } from 'hono';
import type { InferenceCore } from '../core/core-types.ts';
import { modelPath, modelRoutes } from './model-path.ts';
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

  // Before `/v2/models/:model`, which would otherwise take "stats" for a model name (Triton does the same).
  app.get('/v2/models/stats', (c) => c.json({ model_stats: core.statistics() }));

  app.on('GET', modelRoutes(''), (c) => {
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

  app.on('GET', modelRoutes('ready'), (c) => {
    const { name, version } = modelPath(c);
    return probe(core.isModelReady(name, version));
  });

  app.on('GET', modelRoutes('config'), (c) => {
    const { name, version } = modelPath(c);
    return c.json(modelConfigToJson(core.modelConfig(name, version)));
  });

  app.on('GET', modelRoutes('stats'), (c) => {
    const { name, version } = modelPath(c);
    return c.json({ model_stats: core.statistics(name, version) });
  });
  return app;
}
