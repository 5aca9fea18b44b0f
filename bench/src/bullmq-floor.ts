import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import type { Call } from './load-driver.ts';
import { type NodeChild, spawnNode } from './node-child.ts';
import type { Payload } from './payloads.ts';

/** Its own prefix: the floor's keys never mix with the product's. */
const FLOOR_PREFIX = 'bench-floor';

export interface BullmqFloor {
  worker: NodeChild;
  /** (c) Add a no-op job carrying the payload, wait for its completion via QueueEvents. */
  call(payload: Payload): Call;
  close(): Promise<void>;
}

const connectionOf = (redisUrl: string) => {
  const u = new URL(redisUrl);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
};

/**
 * The bare BullMQ round trip the product's invocation path is built on: producer here, a no-op Worker in
 * another process, completion awaited the idiomatic way (QueueEvents + job.waitUntilFinished). Jobs carry
 * the same data and options as the gateway's invocation jobs, so only the product's own work differs.
 */
export async function startBullmqFloor(opts: {
  redisUrl: string;
  /** The no-op Worker's concurrency. */
  concurrency: number;
  /** Most jobs awaited at once: each waitUntilFinished adds a 'closing' listener to the Queue. */
  maxInFlight: number;
}): Promise<BullmqFloor> {
  const queueName = `noop-${randomUUID().slice(0, 8)}`;
  const worker = spawnNode('noop-worker', resolve(import.meta.dirname, 'noop-worker.ts'), {
    BENCH_REDIS_URL: opts.redisUrl,
    BENCH_QUEUE: queueName,
    BENCH_PREFIX: FLOOR_PREFIX,
    BENCH_CONCURRENCY: String(opts.concurrency),
  });
  const queue = new Queue(queueName, { connection: connectionOf(opts.redisUrl), prefix: FLOOR_PREFIX });
  queue.setMaxListeners(opts.maxInFlight + 10);
  const events = new QueueEvents(queueName, { connection: connectionOf(opts.redisUrl), prefix: FLOOR_PREFIX });
  const close = async () => {
    await events.close();
    await queue.close();
    await worker.stop();
  };
  try {
    await Promise.all([worker.waitForLine(/^ready$/, 30_000), queue.waitUntilReady(), events.waitUntilReady()]);
  } catch (err) {
    await close();
    throw err;
  }
  const functionId = randomUUID();
  const versionId = randomUUID();

  return {
    worker,
    call(payload) {
      const input = { kind: 'json', contentType: 'application/json', value: payload.body };
      return async () => {
        const requestId = randomUUID();
        const job = await queue.add(
          'invoke',
          { requestId, functionId, versionId, input, headers: {} },
          // The gateway's job options (invocation-producer.ts): id = request id, retries, finished jobs kept.
          {
            jobId: requestId,
            attempts: 3,
            backoff: { type: 'exponential', delay: 200 },
            removeOnComplete: { age: 3600 },
            removeOnFail: { age: 3600 },
          },
        );
        await job.waitUntilFinished(events, 30_000);
      };
    },
    close,
  };
}
