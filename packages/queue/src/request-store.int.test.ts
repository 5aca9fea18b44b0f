import { errorCodeOfHttpStatus } from '@nvcf/protocol';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCompletionWaiter } from './completion-waiter.ts';
import type { InvocationResult } from './invocation-result.ts';
import { createKeys, type Keys } from './keys.ts';
import { createRedis, type RedisClient } from './redis-connection.ts';
import { createRequestStore, type RequestStore } from './request-store.ts';

let server: RedisHandle;
let redis: RedisClient;
let subscriber: RedisClient;
let keys: Keys;
let store: RequestStore;

/** A function's answer with this status: a failure (coded by its status) from 400 on. */
const result = (status: number, text: string): InvocationResult => ({
  ...(status < 400 ? { ok: true as const } : { ok: false as const, code: errorCodeOfHttpStatus(status) }),
  status,
  contentType: 'application/json',
  body: Buffer.from(text),
});

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url);
  subscriber = createRedis(server.url, { blocking: true });
});
afterAll(async () => {
  redis.disconnect();
  subscriber.disconnect();
  await server.close();
});
beforeEach(() => {
  keys = createKeys(`t${uuidv4().slice(0, 8)}`);
  store = createRequestStore(redis, keys, { ttlSeconds: 120 });
});

describe('request store', () => {
  it('walks queued → in-progress → fulfilled → delivered, handing the result out once', async () => {
    const id = uuidv4();
    expect(await store.create(id, 'f', 'v')).toBe(true);
    expect(await store.create(id, 'f', 'v')).toBe(false);
    expect(await store.take(id)).toMatchObject({ kind: 'pending', state: 'queued', percent: 0 });
    expect(await store.settled(id)).toBe(false);
    // A running function's progress report is what marks it in progress.
    expect(await store.reportProgress(id, 10)).toBe(true);
    expect(await store.take(id)).toMatchObject({ kind: 'pending', state: 'in-progress', percent: 10 });
    expect(await store.complete(id, result(200, '{"ok":true}'))).toBe(true);
    const taken = await store.take(id);
    expect(taken.kind).toBe('result');
    if (taken.kind === 'result') {
      expect(taken.result.status).toBe(200);
      expect(taken.result.body.toString()).toBe('{"ok":true}');
      expect(taken.functionId).toBe('f');
    }
    expect((await store.take(id)).kind).toBe('delivered');
  });

  it("keeps a failure's error code beside its rendering, for a read and for the inline reply; reads an uncoded one by its status", async () => {
    const gatewayId = uuidv4();
    const waiter = createCompletionWaiter(subscriber, keys, gatewayId);
    await waiter.start();
    try {
      const [coded, legacy] = [uuidv4(), uuidv4()];
      await store.create(coded, 'f', 'v');
      const inline = waiter.register(coded, Date.now() + 10_000);
      // 422 alone reads as INVALID_ARGUMENT: the code the worker gave is what travels.
      const failure: InvocationResult = {
        ok: false,
        code: 'UNPROCESSABLE',
        status: 422,
        contentType: 'application/json',
        body: Buffer.from('{"detail":"no"}'),
      };
      await store.complete(coded, failure, { gatewayId, maxInlineBytes: 1024 });
      const got = await inline.outcome;
      expect(got.kind === 'completed' && got.result).toMatchObject({ ok: false, status: 422, code: 'UNPROCESSABLE' });
      expect(got.kind === 'completed' && got.result?.body.toString()).toBe('{"detail":"no"}');
      expect(await store.peek(coded)).toMatchObject({
        kind: 'result',
        result: { ok: false, status: 422, code: 'UNPROCESSABLE' },
      });
      // The previous release's workers stored some failures without a code: read as failures coded by status.
      await store.create(legacy, 'f', 'v');
      await redis.hset(keys.request(legacy), {
        state: 'errored',
        code: '502',
        ctype: 'text/plain',
        body: 'x',
        err: '',
      });
      expect(await store.take(legacy)).toMatchObject({
        kind: 'result',
        result: { ok: false, status: 502, code: 'UNAVAILABLE' },
      });
    } finally {
      await waiter.close();
    }
  });

  it('never lets a late duplicate overwrite a terminal state', async () => {
    const id = uuidv4();
    await store.create(id, 'f', 'v');
    expect(await store.complete(id, result(200, 'first'))).toBe(true);
    expect(await store.complete(id, result(500, 'second'))).toBe(false);
    expect(await store.reportProgress(id, 50)).toBe(false);
    expect(await store.settled(id)).toBe(true);
    const taken = await store.take(id);
    expect(taken.kind === 'result' && taken.result.body.toString()).toBe('first');
    // After delivery, the tombstone still blocks writes.
    expect(await store.complete(id, result(200, 'third'))).toBe(false);
    expect(await store.reportProgress(id, 50)).toBe(false);
    expect(await store.take(id)).toMatchObject({ kind: 'delivered' });
    expect(await store.settled(id)).toBe(true);
  });

  it('counts a second run of a request, not a re-sent answer of the same run', async () => {
    const id = uuidv4();
    await store.create(id, 'f', 'v');
    const ofEntry = (entryId: string) => ({ queue: keys.queue('v'), entryId, inputKept: false });
    expect(await store.complete(id, result(200, 'first'), undefined, ofEntry('1-0'))).toBe(true);
    // The same entry's answer again: its first reply was lost while Redis was away, and the worker sent it again.
    expect(await store.complete(id, result(200, 'first'), undefined, ofEntry('1-0'))).toBe(false);
    expect(await redis.hget(keys.request(id), 'runs')).toBe('1');
    // Another entry's: the job stalled, was queued again, and both runs finished.
    expect(await store.complete(id, result(200, 'late'), undefined, ofEntry('2-0'))).toBe(false);
    expect(await redis.hget(keys.request(id), 'runs')).toBe('2');
    const taken = await store.take(id);
    expect(taken.kind === 'result' && taken.result.body.toString()).toBe('first');
  });

  it('a result for an unknown or expired request is not stored', async () => {
    const id = uuidv4();
    expect(await store.complete(id, result(200, 'x'))).toBe(false);
    expect((await store.take(id)).kind).toBe('missing');
    expect(await redis.exists(keys.request(id))).toBe(0);
  });

  it('reads the input kept beside a job, byte for byte; nothing once it is gone', async () => {
    const id = uuidv4();
    await store.create(id, 'f', 'v');
    const bytes = Buffer.from([0, 1, 2, 255]);
    await redis.set(keys.requestInput(id), bytes);
    expect(await store.readInput(id)).toEqual(bytes);
    await store.dropInput(id);
    expect(await store.readInput(id)).toBeUndefined();
  });

  it('puts a TTL on every record', async () => {
    const id = uuidv4();
    await store.create(id, 'f', 'v');
    const ttl = await redis.ttl(keys.request(id));
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it('keeps binary bodies byte for byte', async () => {
    const id = uuidv4();
    await store.create(id, 'f', 'v');
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await store.complete(id, { ok: true, status: 200, contentType: 'application/octet-stream', body });
    const taken = await store.take(id);
    expect(taken.kind === 'result' && Buffer.compare(taken.result.body, body)).toBe(0);
  });
});

describe('completion waiter', () => {
  it('wakes a waiter registered before completion, via one shared subscription', async () => {
    const waiter = createCompletionWaiter(subscriber, keys, uuidv4());
    await waiter.start();
    try {
      const ids = [uuidv4(), uuidv4(), uuidv4()];
      for (const id of ids) await store.create(id, 'f', 'v');
      const waits = ids.map((id) => waiter.register(id, Date.now() + 10_000));
      expect(waiter.pending).toBe(3);
      await store.complete(ids[1] as string, result(200, 'x'));
      expect(await waits[1]?.outcome).toEqual({ kind: 'completed' });
      expect(waiter.pending).toBe(2);
      const numsub = (await redis.pubsub('NUMSUB', keys.completions)) as [string, number];
      // One subscription per process, however many requests wait.
      expect(Number(numsub[1])).toBe(1);
      for (const w of waits) w.settle({ kind: 'aborted' });
    } finally {
      await waiter.close();
    }
  });

  it('hands a small result to the accepting gateway inline, and one waiter only', async () => {
    const gatewayId = uuidv4();
    const waiter = createCompletionWaiter(subscriber, keys, gatewayId);
    await waiter.start();
    try {
      const small = uuidv4();
      const big = uuidv4();
      await store.create(small, 'f', 'v');
      await store.create(big, 'f', 'v');
      const first = waiter.register(small, Date.now() + 10_000);
      const second = waiter.register(small, Date.now() + 10_000);
      const bigWait = waiter.register(big, Date.now() + 10_000);
      const body = Buffer.from([0, 10, 13, 255, 10]);
      await store.complete(
        small,
        { ok: true, status: 201, contentType: 'x/y', body, headers: { 'x-a': '1\n2' } },
        { gatewayId, maxInlineBytes: 8 },
      );
      await store.complete(big, result(200, '0123456789'), { gatewayId, maxInlineBytes: 8 });
      const got = await first.outcome;
      expect(got.kind === 'completed' && got.result).toMatchObject({
        status: 201,
        contentType: 'x/y',
        headers: { 'x-a': '1\n2' },
      });
      expect(got.kind === 'completed' && Buffer.compare(got.result?.body ?? Buffer.alloc(0), body)).toBe(0);
      expect(await second.outcome).toEqual({ kind: 'completed' });
      expect(await bigWait.outcome).toEqual({ kind: 'completed' });
      await store.markDelivered(small);
      expect((await store.take(small)).kind).toBe('delivered');
    } finally {
      await waiter.close();
    }
  });

  it('times out at the deadline and honours an abort signal', async () => {
    const waiter = createCompletionWaiter(subscriber, keys, uuidv4());
    await waiter.start();
    try {
      const t0 = Date.now();
      const timedOut = waiter.register(uuidv4(), t0 + 150);
      expect(await timedOut.outcome).toEqual({ kind: 'timeout' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
      const ac = new AbortController();
      const aborted = waiter.register(uuidv4(), Date.now() + 10_000, ac.signal);
      ac.abort();
      expect(await aborted.outcome).toEqual({ kind: 'aborted' });
      expect(waiter.pending).toBe(0);
    } finally {
      await waiter.close();
    }
  });
});
