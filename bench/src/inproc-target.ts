import { type LoadedModel, SessionCache } from '@nvcf/inference-server';
import { scanModelRepository } from '@nvcf/models';
import type { Call } from './load-driver.ts';
import type { Payload } from './payloads.ts';

const silent = { info() {}, warn() {} };

export interface InprocModels {
  model(name: string): LoadedModel;
  close(): Promise<void>;
}

/** The models of a repository loaded in this process, as the worker loads them: cpu, one intra/inter-op thread. */
export async function loadInprocModels(modelRepository: string, names: string[]): Promise<InprocModels> {
  const cache = new SessionCache({
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logger: silent,
  });
  const entries = (await scanModelRepository(modelRepository)).filter((e) => names.includes(e.name));
  const models = new Map<string, LoadedModel>();
  try {
    for (const entry of entries) models.set(entry.name, await cache.load(entry));
  } catch (err) {
    await cache.close();
    throw err;
  }
  return {
    model(name) {
      const m = models.get(name);
      if (!m) throw new Error(`model '${name}' not found in ${modelRepository}`);
      return m;
    },
    close: () => cache.close(),
  };
}

/** (a) `LoadedModel.run` on tensors decoded once: the cost of inference alone. */
export function inprocCall(model: LoadedModel, payload: Payload): Call {
  return async () => {
    const outputs = await model.run(payload.tensors);
    if (outputs.length !== payload.outputs.length) throw new Error(`expected ${payload.outputs.length} outputs`);
  };
}
