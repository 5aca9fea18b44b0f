/**
 * The gateway metrics tests, unchanged, on a real Redis Cluster of 3 primaries with a replica each: the queue
 * gauges read each version's queue in its own slot (a command a cluster client cannot route by key, such as
 * XINFO, would fail there).
 */
process.env.NVCF_TEST_REDIS = 'cluster';
await import('./metrics.int.test.ts');
