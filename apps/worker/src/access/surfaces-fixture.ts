/**
 * Test helper (only *.int.test.ts import it): a temporary example repository named `models` with a function
 * model beside `simple`, the real core over it, and the worker's own surfaces (startInferenceSurfaces) over
 * that core, configured from worker environment variables as main.ts configures them.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InferenceCore, startInferenceCore } from '@nvcf/inference-server';
import { generateExampleRepository } from '@nvcf/models';
import { createLogger } from '@nvcf/service-kit';
import { loadWorkerConfig } from '../config.ts';
import { startInferenceSurfaces } from '../inference-surfaces.ts';
import { addFunctionModel } from './function-model-fixture.ts';

export interface ServedSurfaces {
  /** KServe V2 (and Triton v1) HTTP base URL. */
  url: string;
  /** KServe V2 (and Triton v1) gRPC `host:port`. */
  grpcAddress: string;
}

export interface SurfacesFixture {
  core: InferenceCore;
  /** Starts the surfaces once more over the same core, configured by `env` over the worker's defaults. */
  serve(env?: Record<string, string>): Promise<ServedSurfaces>;
  close(): Promise<void>;
}

export async function startSurfacesFixture(prefix: string): Promise<SurfacesFixture> {
  const root = await mkdtemp(join(tmpdir(), `nvcf-surfaces-${prefix}-`));
  const dir = join(root, 'models');
  const log = createLogger({ name: 'test', level: 'silent' });
  const closers: (() => Promise<void>)[] = [];
  let core: InferenceCore | undefined;
  try {
    await mkdir(dir);
    await generateExampleRepository(dir);
    await addFunctionModel(dir);
    core = await startInferenceCore(
      { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
      log,
    );
  } catch (err) {
    await core?.close();
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  const started = core;
  return {
    core: started,
    async serve(env = {}) {
      const config = loadWorkerConfig({
        MODEL_REPOSITORY: dir,
        WORKER_HOST: '127.0.0.1',
        KSERVE_HTTP_PORT: '0',
        KSERVE_GRPC_PORT: '0',
        METRICS_PORT: '-1',
        ...env,
      });
      const surfaces = await startInferenceSurfaces(started, config, log);
      closers.push(() => surfaces.close());
      return { url: `http://127.0.0.1:${surfaces.ports.http}`, grpcAddress: `127.0.0.1:${surfaces.ports.grpc}` };
    },
    async close() {
      await Promise.all(closers.map((close) => close()));
      await started.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
