/**
 * The invocation tests (pexec, long polls, delivery of a large answer), unchanged, on a real Redis Cluster of 3
 * primaries with a replica each: the harness starts one instead of a single redis-server.
 */
process.env.NVCF_TEST_REDIS = 'cluster';
await import('./pexec.int.test.ts');
await import('./long-poll.int.test.ts');
await import('./delivery.int.test.ts');
