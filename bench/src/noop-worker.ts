/**
 * The floor's consumer: a bare BullMQ Worker that completes every job at once, returning nothing.
 * Run as a child process by bullmq-floor.ts; prints `ready` once it is connected and consuming.
 * Env: BENCH_REDIS_URL, BENCH_QUEUE, BENCH_PREFIX, BENCH_CONCURRENCY.
 */
import { Worker } from 'bullmq';

const env = process.env;
const redis = new URL(env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
const worker = new Worker(env.BENCH_QUEUE ?? 'noop', async () => {}, {
  connection: { host: redis.hostname, port: Number(redis.port || 6379), maxRetriesPerRequest: null },
  prefix: env.BENCH_PREFIX ?? 'bench-floor',
  concurrency: Number(env.BENCH_CONCURRENCY ?? 32),
});
worker.on('error', (err) => console.error('noop-worker:', err.message));
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().finally(() => process.exit(0));
});
