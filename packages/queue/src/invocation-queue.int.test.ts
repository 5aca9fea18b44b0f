import { randomUUID } from 'node:crypto';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsumerOptions,
  createInvocationConsumer,
  type InvocationConsumer,
  type InvocationProcessor,
} from './invocation-consumer.ts';
import { createInvocationProducer, QueueBytesError } from './invocation-producer.ts';
import type { InvocationResult } from './invocation-result.ts';
import { InvocationJob } from './job-contract.ts';
import { createKeys, newRequestId, WORKERS_GROUP } from './keys.ts';
import { createRedis, type RedisClient } from './redis-connection.ts';
import { createRequestStore } from './request-store.ts';

/** The invocation queue end to end on a real Redis: the gateway's producer, workers' consumers, the request store. */
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

/** A fresh deployment: its own key prefix, producer and store, and a way to start workers on it. */
function setup(attempts = 3, maxVersionBytes = 0) {
  const keys = createKeys(`q${randomUUID().slice(0, 8)}`);
  const store = createRequestStore(redis, keys, { ttlSeconds: 60 });
  const producer = createInvocationProducer(redis, keys, { attempts, ttlSeconds: 60, maxVersionBytes });
  const versionId = randomUUID();
  const job = (n = 0, input: InvocationJob['input'] = json({ n })): InvocationJob => ({
    requestId: newRequestId(versionId),
    functionId: randomUUID(),
    versionId,
    input,
    headers: {},
  });
  const consume = (processor: InvocationProcessor, opts: Partial<ConsumerOptions> = {}): InvocationConsumer => {
    const connection = createRedis(server.url, { blocking: true });
    const consumer = createInvocationConsumer({ connection, keys, store }, versionId, processor, {
      concurrency: 1,
      workerId: 'w1',
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      maxStalledCount: 1,
      failure: (_requestId, reason) => ({
        ok: false,
        code: 'INTERNAL',
        status: 500,
        contentType: 'text/plain',
        body: Buffer.from(reason),
      }),
      ...opts,
    });
    const close = consumer.close;
    consumer.close = async (force?: boolean) => {
      await close(force);
      connection.disconnect();
    };
    opened.push(consumer);
    return consumer;
  };
  /** The request's answer once a worker stored it (polled: the test holds no worker's hand). */
  const answer = async (requestId: string, withinMs = 10_000) => {
    const until = Date.now() + withinMs;
    for (;;) {
      const view = await store.peek(requestId);
      if (view.kind === 'result') return view.result;
      if (Date.now() > until) throw new Error(`no answer for ${requestId}: ${view.kind}`);
      await sleep(10);
    }
  };
  return { keys, store, producer, versionId, job, consume, answer };
}

const json = (value: unknown) => ({ kind: 'json' as const, contentType: 'application/json', value });
const ok = (text: string): InvocationResult => ({
  ok: true,
  status: 200,
  contentType: 'text/plain',
  body: Buffer.from(text),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A gate the test opens: work held on it stays running however fast the machine is. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describe('invocation queue', () => {
  it('records the request and queues its job in one step; the same request twice is a no-op', async () => {
    const { keys, store, producer, versionId, job } = setup(3);
    const j = job(1);
    expect(await producer.enqueue(j, { principal: 'alice' })).toBe(true);
    expect(await producer.enqueue({ ...j, input: json({ n: 2 }) })).toBe(false);
    expect(await producer.depth(versionId)).toBe(1);
    expect(await producer.waiting(versionId)).toBe(1);
    expect(await store.owner(j.requestId)).toEqual({ functionId: j.functionId, versionId, principal: 'alice' });
    expect((await store.peek(j.requestId)).kind).toBe('pending');
    const entries = await redis.xrange(keys.queue(versionId).stream, '-', '+');
    expect(entries).toHaveLength(1);
    const fields = entries[0]?.[1] ?? [];
    // The entry carries the request and function ids, the queue the version: the job's JSON leaves them out, and
    // a JSON body's usual content type and empty headers, which parsing the entry puts back.
    const { requestId, functionId, versionId: _, input, headers, ...rest } = j;
    expect(headers).toEqual({});
    const entryInput = { kind: 'json', value: { n: 1 } };
    expect(input).toEqual({ ...entryInput, contentType: 'application/json' });
    expect(fields).toEqual([
      'id',
      requestId,
      'f',
      functionId,
      'j',
      JSON.stringify({ input: entryInput, ...rest }),
      'm',
      '3',
    ]);
    expect(InvocationJob.parse({ ...JSON.parse(String(fields[5])), requestId, functionId, versionId })).toEqual(j);
    // Every key lives under the deployment's prefix (the bytes the queue holds: queueBytes).
    const all = await redis.keys(`${keys.prefix}:*`);
    expect(all.sort()).toEqual(
      [keys.queue(versionId).stream, keys.request(j.requestId), keys.queueBytes(versionId)].sort(),
    );
    // Headers the function may read travel when there are any.
    const withHeaders = { ...job(3), headers: { 'inference-header-content-length': '42' } };
    await producer.enqueue(withHeaders);
    const [, last] = (await redis.xrange(keys.queue(versionId).stream, '-', '+'))[1] ?? [];
    expect(JSON.parse(String(last?.[5])).headers).toEqual(withHeaders.headers);
  });

  it('runs a job, stores its answer and takes it off the queue, its kept input with it', async () => {
    const { keys, producer, versionId, job, consume, answer } = setup();
    const j = job(0, { kind: 'stored', contentType: 'application/json', format: 'json' });
    await producer.enqueue(j, { input: Buffer.from('{"n":7}') });
    expect(await redis.get(keys.requestInput(j.requestId))).toBe('{"n":7}');
    const seen: number[] = [];
    consume(async (running, ctx) => {
      seen.push(ctx.attempt, ctx.maxAttempts);
      return ok(`done ${running.requestId}`);
    });
    expect((await answer(j.requestId)).body.toString()).toBe(`done ${j.requestId}`);
    expect(seen).toEqual([1, 3]);
    expect(await producer.depth(versionId)).toBe(0);
    expect(await redis.xlen(keys.queue(versionId).stream)).toBe(0);
    expect(await redis.exists(keys.requestInput(j.requestId))).toBe(0);
    expect(await redis.xpending(keys.queue(versionId).stream, WORKERS_GROUP)).toEqual([0, null, null, null]);
  });

  it('reports each try as job events (started, then finished or threw); a listener that throws fails no job', async () => {
    const { producer, job, consume, answer } = setup(2);
    const j = job(4);
    const seen: string[] = [];
    const errors: Error[] = [];
    const consumer = consume(async (running, ctx) => {
      if (ctx.attempt === 1) throw new Error('first try fails');
      return ok(`try ${ctx.attempt} of ${running.requestId}`);
    });
    consumer.on('error', (err) => errors.push(err));
    consumer.on('job', (event) => {
      const outcome = event.type === 'finished' ? ` ${event.result?.ok}` : event.type === 'threw' ? ' error' : '';
      seen.push(`${event.type} ${event.ctx.attempt}${outcome}`);
      expect(event.job.requestId).toBe(j.requestId);
      if (event.type !== 'started') expect(event.at).toBeGreaterThanOrEqual(event.startedAt);
    });
    consumer.on('job', () => {
      throw new Error('broken observer');
    });
    await producer.enqueue(j);
    expect((await answer(j.requestId)).body.toString()).toBe(`try 2 of ${j.requestId}`);
    expect(seen).toEqual(['started 1', 'threw 1 error', 'started 2', 'finished 2 true']);
    expect(errors.map((e) => e.message)).toEqual(Array(4).fill('broken observer'));
  });

  it('answers a job whose record expired while it waited: the record is made again from the entry', async () => {
    const { keys, store, producer, versionId, job, consume, answer } = setup();
    const j = job(3);
    await producer.enqueue(j, { principal: 'alice' });
    // Its TTL ran out while no worker read the queue.
    await redis.del(keys.request(j.requestId));
    consume(async (running) => ok(`late ${running.requestId}`));
    expect((await answer(j.requestId)).body.toString()).toBe(`late ${j.requestId}`);
    expect(await store.owner(j.requestId)).toEqual({ functionId: j.functionId, versionId, principal: '' });
    expect(await redis.xlen(keys.queue(versionId).stream)).toBe(0);
  });

  it('delivers jobs queued before any worker read the queue, and a job queued while it waits', async () => {
    const { producer, job, consume, answer } = setup();
    const early = job(1);
    await producer.enqueue(early);
    const consumer = consume(async (j) => ok(String(j.requestId)));
    await consumer.waitUntilReady();
    expect((await answer(early.requestId)).body.toString()).toBe(early.requestId);
    const late = job(2);
    await producer.enqueue(late);
    expect((await answer(late.requestId)).body.toString()).toBe(late.requestId);
  });

  it('retries a failing job after a pause, counting attempts, and answers the last failure', async () => {
    const { producer, job, consume, answer } = setup(3);
    const flaky = job(1);
    const doomed = job(2);
    const tries = new Map<string, number[]>();
    consume(
      async (j, ctx) => {
        tries.set(j.requestId, [...(tries.get(j.requestId) ?? []), Date.now()]);
        if (j.requestId === doomed.requestId || ctx.attempt < 2) throw new Error(`attempt ${ctx.attempt} failed`);
        return ok(`attempt ${ctx.attempt}`);
      },
      { concurrency: 2 },
    );
    await producer.enqueue(flaky);
    await producer.enqueue(doomed);
    expect((await answer(flaky.requestId)).body.toString()).toBe('attempt 2');
    const last = await answer(doomed.requestId);
    expect(last.status).toBe(500);
    expect(last.body.toString()).toBe('attempt 3 failed');
    const times = tries.get(doomed.requestId) ?? [];
    expect(times).toHaveLength(3);
    // Exponential backoff: 200 ms, then 400 ms.
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(195);
    expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(395);
  });

  it('runs as many jobs at once as its concurrency, and more once raised', async () => {
    const { producer, job, consume, answer } = setup();
    const g = gate();
    let runningNow = 0;
    let most = 0;
    const consumer = consume(
      async (j) => {
        runningNow++;
        most = Math.max(most, runningNow);
        await g.opened;
        runningNow--;
        return ok(j.requestId);
      },
      { concurrency: 2 },
    );
    const jobs = Array.from({ length: 5 }, (_, n) => job(n));
    for (const j of jobs) await producer.enqueue(j);
    while (runningNow < 2) await sleep(5);
    await sleep(100);
    expect(runningNow).toBe(2);
    consumer.concurrency = 4;
    while (runningNow < 4) await sleep(5);
    g.open();
    for (const j of jobs) expect((await answer(j.requestId)).body.toString()).toBe(j.requestId);
    expect(most).toBe(4);
  });

  it("keeps a running job's lease alive past the lock duration: no other worker gets it", async () => {
    const { producer, job, consume, answer } = setup();
    const g = gate();
    const runs: string[] = [];
    const processor: InvocationProcessor = async (j) => {
      runs.push(j.requestId);
      await g.opened;
      return ok('once');
    };
    const opts = { lockDurationMs: 500, stalledIntervalMs: 100 };
    consume(processor, opts);
    const j = job();
    await producer.enqueue(j);
    while (runs.length === 0) await sleep(5);
    consume(processor, { ...opts, workerId: 'w2' });
    await sleep(2000); // four leases: renewed all the while
    g.open();
    expect((await answer(j.requestId)).body.toString()).toBe('once');
    expect(runs).toEqual([j.requestId]);
  });

  it('recovers the jobs of a worker that died, and fails a job that stalls too often', async () => {
    const { keys, producer, job, consume, answer, versionId } = setup();
    const held = gate();
    const opts = { lockDurationMs: 300, stalledIntervalMs: 100, maxStalledCount: 1 };
    const started: string[] = [];
    // A worker that takes the job and dies (force close: its lease is no longer renewed).
    const dying = consume(async (j) => {
      started.push(j.requestId);
      await held.opened;
      return ok('never stored');
    }, opts);
    const j = job();
    await producer.enqueue(j);
    while (started.length === 0) await sleep(5);
    await dying.close(true);
    const rescuer = consume(async (r) => ok(`recovered ${r.requestId}`), { ...opts, workerId: 'w2' });
    expect((await answer(j.requestId)).body.toString()).toBe(`recovered ${j.requestId}`);
    await rescuer.close();

    // Stalling twice with maxStalledCount 1: the request is answered as failed, not run a third time.
    const twice = job(2);
    await producer.enqueue(twice);
    const again = gate();
    for (const workerId of ['w3', 'w4']) {
      const before = started.length;
      const c = consume(
        async (r) => {
          started.push(r.requestId);
          await again.opened;
          return ok('never stored');
        },
        { ...opts, workerId },
      );
      while (started.length === before) await sleep(5);
      await c.close(true);
    }
    consume(async () => ok('must not run'), { ...opts, workerId: 'w5' });
    const failed = await answer(twice.requestId);
    expect(failed.status).toBe(500);
    expect(failed.body.toString()).toMatch(/stalled more than 1 times/);
    expect(await producer.depth(versionId)).toBe(0);
    // Out of the queue for good: the bytes the job held there are released with it.
    expect(await redis.exists(keys.queueBytes(versionId))).toBe(0);
    // The first "dead" worker's run was alive after all and finishes late: its answer is discarded (the rescuer's
    // stands) but counted, a second run of one request, though its entry left the queue long ago.
    held.open();
    again.open();
    const runs = () => redis.hget(keys.request(j.requestId), 'runs');
    for (let i = 0; i < 1000 && (await runs()) !== '2'; i++) await sleep(10);
    expect(await runs()).toBe('2');
    expect((await answer(j.requestId)).body.toString()).toBe(`recovered ${j.requestId}`);
  });

  it('withdraws a waiting job, not a running one; tells positions; skips a job whose request was settled', async () => {
    const { producer, store, job, consume, answer, versionId } = setup();
    const g = gate();
    const ran: string[] = [];
    const consumer = consume(async (j) => {
      ran.push(j.requestId);
      await g.opened;
      return ok(j.requestId);
    });
    await consumer.waitUntilReady();
    const [first, second, third, fourth] = [job(1), job(2), job(3), job(4)];
    for (const j of [first, second, third, fourth]) await producer.enqueue(j);
    while (ran.length === 0) await sleep(5);
    expect(await producer.position(versionId, first.requestId)).toBe(0);
    expect(await producer.position(versionId, second.requestId)).toBe(0);
    expect(await producer.position(versionId, third.requestId)).toBe(1);
    expect(await producer.position(versionId, fourth.requestId)).toBe(2);
    expect(await producer.position(versionId, newRequestId(versionId))).toBeUndefined();

    expect(await producer.withdraw(versionId, first.requestId)).toBe(false);
    expect(await producer.withdraw(versionId, third.requestId)).toBe(true);
    expect(await producer.position(versionId, third.requestId)).toBeUndefined();
    expect(await producer.position(versionId, fourth.requestId)).toBe(1);
    // Settled elsewhere while it waited (a cancel): the worker's processor sees that and answers nothing.
    await store.complete(second.requestId, {
      ok: false,
      code: 'CANCELLED',
      status: 499,
      contentType: 'text/plain',
      body: Buffer.from('gone'),
    });
    g.open();
    expect((await answer(fourth.requestId)).body.toString()).toBe(fourth.requestId);
    expect(ran).toEqual([first.requestId, second.requestId, fourth.requestId]);
    // The processor answered the settled one too, but the first answer stands.
    expect((await answer(second.requestId)).body.toString()).toBe('gone');
    expect(await producer.depth(versionId)).toBe(0);
  });

  it("counts each request's bytes in its version's queues per account until its job leaves; past the bound nothing is stored", async () => {
    const bound = 3000;
    const { keys, store, producer, versionId, job, consume, answer } = setup(1, bound);
    const stored = () => job(0, { kind: 'stored', contentType: 'application/octet-stream', format: 'bytes' });
    const entry = () => job(0, { kind: 'entry', contentType: 'application/octet-stream' });
    const [ran, settled, withdrawn, refused] = [stored(), entry(), stored(), stored()];
    const bytes = Buffer.alloc(900, 7);
    await producer.enqueue(ran, { input: bytes, account: 'team-a' });
    await producer.enqueue(settled, { entryBytes: bytes, account: 'team-a' });
    await producer.enqueue(withdrawn, { input: bytes, account: 'team-b' });
    const a = await producer.accountBytes('team-a');
    const b = await producer.accountBytes('team-b');
    expect(a).toBeGreaterThan(2 * 900);
    expect(b).toBeGreaterThan(900);
    expect(Number(await redis.hget(keys.queueBytes(versionId), 't'))).toBe(a + b);
    // A fourth would pass the version's bound: refused, and nothing of it stored.
    await expect(producer.enqueue(refused, { input: bytes, account: 'team-c' })).rejects.toThrow(QueueBytesError);
    expect(await store.owner(refused.requestId)).toBeUndefined();
    expect(await redis.exists(keys.requestInput(refused.requestId))).toBe(0);
    expect(await producer.accountBytes('team-c')).toBe(0);
    // Withdrawn (a cancel): released at once.
    expect(await producer.withdraw(versionId, withdrawn.requestId)).toBe(true);
    expect(await producer.accountBytes('team-b')).toBe(0);
    // Run and answered, or settled meanwhile and left (no answer stored): released as each leaves the queue.
    await store.complete(settled.requestId, {
      ok: false,
      code: 'CANCELLED',
      status: 499,
      contentType: 'text/plain',
      body: Buffer.from('gone'),
    });
    const worker = consume(async (j) => (j.requestId === settled.requestId ? undefined : ok(j.requestId)));
    expect((await answer(ran.requestId)).status).toBe(200);
    while ((await producer.depth(versionId)) > 0) await sleep(10);
    await worker.close();
    expect(await producer.accountBytes('team-a')).toBe(0);
    expect(await redis.exists(keys.queueBytes(versionId))).toBe(0);
    // Room again, and a deleted version's queues take what they held with them.
    await producer.enqueue(refused, { input: bytes, account: 'team-c' });
    expect(await producer.accountBytes('team-c')).toBeGreaterThan(900);
    await producer.retire(versionId, async () => {});
    expect(await producer.accountBytes('team-c')).toBe(0);
    expect(await redis.exists(keys.queueBytes(versionId), keys.requestInput(refused.requestId))).toBe(0);
  });

  it('hands the bytes an entry carries to the job, every byte value intact through a retry and a stall', async () => {
    const { keys, producer, job, consume, answer, versionId } = setup(3);
    // Every byte value, twice: what a protobuf or a tensor may hold, NUL and bytes that are not UTF-8 included.
    const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    const kserve = {
      kind: 'kserve' as const,
      header: { inputs: [] },
      binaryBytes: bytes.length,
      inEntry: true as const,
    };
    const j = job(0, kserve);
    await producer.enqueue(j, { entryBytes: bytes });
    const seen: { attempt: number; same: boolean }[] = [];
    const opts = { lockDurationMs: 300, stalledIntervalMs: 100 };
    const held = gate();
    // The first worker fails the first try (a retry: the entry waits in the delayed set), then takes the second
    // and dies (a stall: maintenance puts the entry back); the second worker answers.
    const first = consume(async (_r, ctx) => {
      seen.push({ attempt: ctx.attempt, same: ctx.entryBytes?.equals(bytes) === true });
      if (ctx.attempt === 1) throw new Error('try again');
      await held.opened;
      return ok('never stored');
    }, opts);
    while (seen.length < 2) await sleep(5);
    await first.close(true);
    consume(
      async (_r, ctx) => {
        seen.push({ attempt: ctx.attempt, same: ctx.entryBytes?.equals(bytes) === true });
        return ok(`got ${ctx.entryBytes?.length}`);
      },
      { ...opts, workerId: 'w2' },
    );
    expect((await answer(j.requestId)).body.toString()).toBe('got 512');
    expect(seen).toEqual([
      { attempt: 1, same: true },
      { attempt: 2, same: true },
      { attempt: 2, same: true },
    ]);
    // Nothing was kept beside the job.
    expect(await redis.exists(keys.requestInput(j.requestId))).toBe(0);
    held.open();

    // A job that says its entry carries its input, on an entry that carries none (or too few bytes), is refused.
    const short = job(1, { ...kserve, binaryBytes: 4 });
    await producer.enqueue(short, { entryBytes: Buffer.from([1, 2, 3]) });
    const none = job(2, kserve);
    await producer.enqueue(none);
    const body = job(3, { kind: 'entry', contentType: 'application/octet-stream' });
    await producer.enqueue(body);
    const refused = [await answer(short.requestId), await answer(none.requestId), await answer(body.requestId)];
    expect(refused.map((r) => r.status)).toEqual([500, 500, 500]);
    expect(refused.map((r) => r.body.toString())).toEqual([
      "malformed invocation job: the job's input is 4 bytes in its entry, which carries 3 bytes",
      "malformed invocation job: the job's input is 512 bytes in its entry, which carries none",
      "malformed invocation job: the job's input is in its entry, which carries none",
    ]);
    expect(await producer.depth(versionId)).toBe(0);
  });

  it('answers a job that does not parse as failed, without running it', async () => {
    const { keys, producer, job, consume, answer, versionId } = setup();
    const j = job();
    await producer.enqueue(j);
    // A job written by something else than the producer (an older release, a hand-made entry).
    await redis.xadd(keys.queue(versionId).stream, '*', 'id', newRequestId(versionId), 'j', '{"not":"a job"}');
    const [[, fields] = ['', []]] = (await redis.xrange(keys.queue(versionId).stream, '-', '+')).slice(-1);
    const badId = fields[1] ?? '';
    await redis.hset(keys.request(badId), 'state', 'queued');
    const ran: string[] = [];
    consume(async (r) => {
      ran.push(r.requestId);
      return ok('ran');
    });
    expect((await answer(j.requestId)).body.toString()).toBe('ran');
    const bad = await answer(badId);
    expect(bad.status).toBe(500);
    expect(bad.body.toString()).toMatch(/^malformed invocation job/);
    expect(ran).toEqual([j.requestId]);
  });

  it('retires a deep queue a page at a time: each waiting request settled once, a running one left to its worker', async () => {
    const { keys, producer, versionId, job, consume } = setup();
    const jobs = Array.from({ length: 2100 }, (_, n) => job(n));
    for (let i = 0; i < jobs.length; i += 300)
      await Promise.all(jobs.slice(i, i + 300).map((j) => producer.enqueue(j)));
    const running = gate();
    const held = gate();
    const taken: string[] = [];
    const consumer = consume(async (j) => {
      taken.push(j.requestId);
      running.open();
      await held.opened;
      return ok('done');
    });
    await running.opened;
    const settled: string[] = [];
    await producer.retire(versionId, async (id) => {
      settled.push(id);
    });
    expect(new Set(settled).size).toBe(settled.length);
    expect(settled.sort()).toEqual(
      jobs
        .map((j) => j.requestId)
        .filter((id) => !taken.includes(id))
        .sort(),
    );
    expect(await redis.exists(keys.queue(versionId).stream)).toBe(0);
    held.open();
    await consumer.close(true);
  });

  it("puts a routed job in the worker's own queue, and retiring the version empties every queue of it", async () => {
    const { keys, producer, versionId, job, consume } = setup();
    const [shared, routed, retrying] = [job(1), job(2), job(3)];
    await producer.enqueue(shared);
    await producer.enqueue(routed, { worker: 'worker-a' });
    expect(await redis.xlen(keys.queue(versionId, 'worker-a').stream)).toBe(1);
    expect(await producer.depth(versionId)).toBe(1);
    // One job waits out a retry's pause when the version goes.
    const failedOnce = gate();
    const consumer = consume(async () => {
      failedOnce.open();
      throw new Error('retry me');
    });
    await producer.enqueue(retrying);
    await failedOnce.opened;
    await consumer.close();
    const settled: string[] = [];
    await producer.retire(versionId, async (id) => {
      settled.push(id);
    });
    expect(settled.sort()).toEqual([shared.requestId, routed.requestId, retrying.requestId].sort());
    expect(await redis.keys(`${keys.prefix}:q*`)).toEqual([]);
  });
});
