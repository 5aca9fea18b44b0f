/**
 * The control-plane tests (functions, versions, deployments, keys) and the no-loss tests (a worker killed or
 * stopped mid-run), unchanged, on a real Redis Cluster of 3 primaries with a replica each: the harness starts one
 * instead of a single redis-server.
 */
process.env.NVCF_TEST_REDIS = 'cluster';
await import('./control-plane.int.test.ts');
await import('./worker-failure.int.test.ts');
