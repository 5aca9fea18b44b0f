/**
 * deploy/kubernetes/examples/worker-pool.yaml is this pool as `nvcf kube worker-pool` prints it (a test holds
 * them equal). After changing the builders: pnpm --filter @nvcf/kubernetes example
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerPoolOptions } from './worker-pool.ts';
import { workerPoolsYaml } from './worker-pool.ts';

export const EXAMPLE_POOL_FILE = resolve(import.meta.dirname, '../../../deploy/kubernetes/examples/worker-pool.yaml');

/** A GPU function version deployed with `minInstances: 0` (scales from zero) to 4, two requests per worker. */
export const EXAMPLE_POOL: WorkerPoolOptions = {
  functionId: '3f2b8c1e-5d4a-4e6f-9a7b-2c1d0e9f8a7b',
  versionId: '8e7d6c5b-4a39-4281-b7c6-d5e4f3a2b1c0',
  functionName: 'densenet',
  specifications: [{ gpu: 'L40S', minInstances: 0, maxInstances: 4, maxRequestConcurrency: 2 }],
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(EXAMPLE_POOL_FILE, workerPoolsYaml([EXAMPLE_POOL]));
  console.log(`wrote ${EXAMPLE_POOL_FILE}`);
}
