/**
 * The SSE tests (streaming functions, events read by another gateway, a client leaving), unchanged, on a real
 * Redis Cluster of 3 primaries with a replica each: the harness starts one instead of a single redis-server.
 */
process.env.NVCF_TEST_REDIS = 'cluster';
await import('./sse.int.test.ts');
