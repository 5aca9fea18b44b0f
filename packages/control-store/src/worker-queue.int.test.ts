import { randomUUID } from 'node:crypto';
import {
  createInvocationConsumer,
  createInvocationProducer,
  createKeys,
  createRedis,
  createRequestStore,
  createSequenceRouter,
  type InvocationConsumer,
  type InvocationJob,
  type InvocationProcessor,
  type InvocationResult,
  newRequestId,
  type RedisClient,
  WORKER_QUEUE_TTL_MS,
} from '@nvcf/queue';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFunctionRegistry } from './function-registry.ts';

/**
 * A worker's own queue (the requests of the sequences it owns, sequence routing) lives while its worker does: its
 * keys expire unless the worker refreshes them, a clean shutdown runs every request waiting there and then deletes
 * them, and a gateway stops routing a sequence to an owner that left.
 */
let server: RedisHandle;
let redis: RedisClient;
const opened: { close(force?: boolean): Promise<void> }[] = [];

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url);
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close(true)));
  redis.disconnect();
  await server.close();
});

function setup() {
  const keys = createKeys(`wq${randomUUID().slice(0, 8)}`);
  const store = createRequestStore(redis, keys, { ttlSeconds: 60 });
  const producer = createInvocationProducer(redis, keys, { attempts: 3, ttlSeconds: 60 });
  const versionId = randomUUID();
  const job = (n: number): InvocationJob => ({
    requestId: newRequestId(versionId),
    functionId: randomUUID(),
    versionId,
    input: { kind: 'json', contentType: 'application/json', value: { n } },
    headers: {},
  });
  const consume = (workerId: string, processor: InvocationProcessor): InvocationConsumer => {
    const connection = createRedis(server.url, { blocking: true });
    const consumer = createInvocationConsumer({ connection, keys, store }, versionId, processor, {
      concurrency: 1,
      workerId,
      ownQueue: true,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      maxStalledCount: 1,
      blockMs: 200,
      ownQueueQuietMs: 300,
      failure: (_requestId, reason) => ({
        ok: false,
        code: 'INTERNAL',
        status: 500,
        contentType: 'text/plain',
        body: Buffer.from(reason),
      }),
    });
    const close = consumer.close;
    consumer.close = async (force?: boolean) => {
      await close(force);
      connection.disconnect();
    };
    opened.push(consumer);
    return consumer;
  };
  const answer = async (requestId: string, withinMs = 20_000) => {
    const until = Date.now() + withinMs;
    for (;;) {
      const view = await store.peek(requestId);
      if (view.kind === 'result') return view.result;
      if (Date.now() > until) throw new Error(`no answer for ${requestId}: ${view.kind}`);
      await sleep(20);
    }
  };
  return { keys, producer, versionId, job, consume, answer };
}

const ok = (text: string): InvocationResult => ({
  ok: true,
  status: 200,
  contentType: 'text/plain',
  body: Buffer.from(text),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}
const nOf = (job: InvocationJob) => (job.input.kind === 'json' ? (job.input.value as { n: number }).n : -1);

describe("a worker's own queue", () => {
  it('expires unless its worker refreshes it, even when a gateway made it anew', async () => {
    const { keys, producer, versionId, job, consume } = setup();
    const own = keys.queue(versionId, 'w1');
    // A gateway routed a request to a worker whose queue is gone (it stopped meanwhile): the stream it makes expires.
    await producer.enqueue(job(1), { worker: 'gone' });
    const orphan = await redis.pttl(keys.queue(versionId, 'gone').stream);
    expect(orphan).toBeGreaterThan(0);
    expect(orphan).toBeLessThanOrEqual(WORKER_QUEUE_TTL_MS);

    const consumer = consume('w1', async (j) => ok(String(nOf(j))));
    await consumer.waitUntilReady();
    const ttl = await redis.pttl(own.stream);
    expect(ttl).toBeGreaterThan(WORKER_QUEUE_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(WORKER_QUEUE_TTL_MS);
    await consumer.close(true);
  });

  it('a clean close runs every request waiting in it, then deletes it', async () => {
    const { keys, producer, versionId, job, consume, answer } = setup();
    const own = keys.queue(versionId, 'w1');
    const held = gate();
    let started = 0;
    const consumer = consume('w1', async (j) => {
      started++;
      await held.opened;
      return ok(`ran ${nOf(j)}`);
    });
    await consumer.waitUntilReady();
    const jobs = [job(1), job(2), job(3)];
    for (const j of jobs) await producer.enqueue(j, { worker: 'w1' });
    // One runs (concurrency 1), held; two wait in the queue when the worker is asked to stop.
    for (let i = 0; started === 0; i++) {
      if (i > 500) throw new Error('the first job never started');
      await sleep(20);
    }
    expect(await redis.xlen(own.stream)).toBe(3);
    const closed = consumer.close();
    await sleep(200);
    held.open();
    await closed;
    for (const [i, j] of jobs.entries()) {
      expect((await answer(j.requestId)).body.toString()).toBe(`ran ${i + 1}`);
    }
    expect(await redis.exists(own.stream, own.delayed, own.delayedJobs)).toBe(0);
  });

  it('a forced close leaves what waits to the queue’s expiry', async () => {
    const { keys, producer, versionId, job, consume } = setup();
    const own = keys.queue(versionId, 'w1');
    const held = gate();
    const consumer = consume('w1', async () => {
      await held.opened;
      return ok('late');
    });
    await consumer.waitUntilReady();
    await producer.enqueue(job(1), { worker: 'w1' });
    await producer.enqueue(job(2), { worker: 'w1' });
    await consumer.close(true);
    held.open();
    expect(await redis.xlen(own.stream)).toBe(2);
    expect(await redis.pttl(own.stream)).toBeGreaterThan(0);
  });
});

describe('sequence routing', () => {
  it('stops routing a sequence to an owner that left the live list: the shared queue gets it', async () => {
    const { keys, versionId } = setup();
    const registry = createFunctionRegistry(redis, keys);
    const router = createSequenceRouter(redis, keys, registry, { ttlSeconds: 60 });
    await registry.heartbeat('w1', [versionId], 60_000);
    expect(await router.route(versionId, { id: 7, start: true, end: false })).toBe('w1');
    expect(await router.route(versionId, { id: 7, start: false, end: false })).toBe('w1');
    // A clean shutdown takes the worker off the live list first (heartbeat.stop).
    await registry.removeWorker('w1', [versionId]);
    expect(await router.route(versionId, { id: 7, start: false, end: false })).toBeUndefined();
    expect(await redis.exists(keys.sequenceOwner(versionId, 'n:7'))).toBe(0);
    // Back, it owns only what it starts anew.
    await registry.heartbeat('w1', [versionId], 60_000);
    expect(await router.route(versionId, { id: 7, start: false, end: true })).toBeUndefined();
  });
});
