/**
 * deploy/kubernetes/examples/worker-pool.yaml and container-pool.yaml are these pools as `nvcf kube worker-pool`
 * prints them (a test holds them equal). After changing the builders: pnpm --filter @nvcf/kubernetes example
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

export const EXAMPLE_CONTAINER_POOL_FILE = resolve(
  import.meta.dirname,
  '../../../deploy/kubernetes/examples/container-pool.yaml',
);

/** A container function (examples/echo-server as its image) in sidecar pods, 1 to 2, four requests per server. */
export const EXAMPLE_CONTAINER_POOL: WorkerPoolOptions = {
  functionId: '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  versionId: '6d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a',
  functionName: 'echo',
  specifications: [{ gpu: 'CPU', minInstances: 1, maxInstances: 2, maxRequestConcurrency: 4 }],
  inference: { image: 'nvcf/echo-server:dev', port: 8000, healthPath: '/health' },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(EXAMPLE_POOL_FILE, workerPoolsYaml([EXAMPLE_POOL]));
  await writeFile(EXAMPLE_CONTAINER_POOL_FILE, workerPoolsYaml([EXAMPLE_CONTAINER_POOL]));
  console.log(`wrote ${EXAMPLE_POOL_FILE} and ${EXAMPLE_CONTAINER_POOL_FILE}`);
}
