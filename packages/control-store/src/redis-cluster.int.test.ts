import { randomUUID } from 'node:crypto';
import {
  createEventStream,
  createInvocationConsumer,
  createInvocationProducer,
  createKeys,
  createRedis,
  createRequestStore,
  type InvocationJob,
  newRequestId,
  primaries,
  type RedisClient,
} from '@nvcf/queue';
import { type RedisClusterHandle, startRedisCluster } from '@nvcf/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyStore } from './api-key-store.ts';
import { createAssetStore } from './asset-store.ts';
import { createFunctionAuthorizationStore } from './function-authorization-store.ts';
import { createFunctionRegistry, type FunctionVersion } from './function-registry.ts';

/** The queue package on a real 3-primary Redis Cluster: every multi-key command stays in one slot. */
let cluster: RedisClusterHandle;
let redis: RedisClient;

beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = createRedis(cluster.url);
});
afterAll(async () => {
  redis?.disconnect();
  await cluster?.close();
});

const slot = async (key: string) => Number(await redis.call('CLUSTER', 'KEYSLOT', key));

const job = (versionId: string, requestId = newRequestId(versionId), n = 1): InvocationJob => ({
  requestId,
  functionId: randomUUID(),
  versionId,
  input: { kind: 'json', contentType: 'application/json', value: { n } },
  headers: {},
});

describe('on a Redis Cluster', () => {
  it('connects with redis+cluster:// and reaches every primary', async () => {
    expect(redis).toBeInstanceOf(Cluster);
    expect(await redis.ping()).toBe('PONG');
    expect(primaries(redis)).toHaveLength(3);
  });

  it("places a request's keys in its version's queue slot, and spreads versions over the primaries", async () => {
    const keys = createKeys('c1');
    const versionId = randomUUID();
    const requestId = newRequestId(versionId);
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(requestId.slice(0, 8)).toBe(versionId.slice(0, 8));
    const queue = keys.queue(versionId);
    const own = keys.queue(versionId, 'w1');
    const queueSlot = await slot(queue.stream);
    for (const key of [
      queue.delayed,
      queue.delayedJobs,
      own.stream,
      own.delayed,
      own.delayedJobs,
      keys.request(requestId),
      keys.requestInput(requestId),
      keys.events(requestId),
      keys.cancelled(requestId),
      keys.streamAttach(requestId),
      keys.sequenceOwner(versionId, 'seq-1'),
      keys.versionWorkers(versionId),
      // What maintain-queue.lua builds from the prefix for a request of the queue.
      `${keys.requestKeyPrefix}{${requestId.slice(0, 8)}}:${requestId}`,
    ]) {
      expect(await slot(key), key).toBe(queueSlot);
    }
    const slots = new Set(
      await Promise.all(Array.from({ length: 32 }, () => slot(keys.request(newRequestId(randomUUID()))))),
    );
    expect(slots.size).toBeGreaterThan(16);
  });

  it('queues, runs and answers a request: producer, consumer, request store and events', async () => {
    const keys = createKeys(`c${randomUUID().slice(0, 6)}`);
    const store = createRequestStore(redis, keys, { ttlSeconds: 60 });
    const events = createEventStream(redis, keys, { ttlSeconds: 60 });
    const producer = createInvocationProducer(redis, keys, { attempts: 2, ttlSeconds: 60 });
    const worker = createRedis(cluster.url, { blocking: true });
    const versionId = randomUUID();
    const tries = new Map<string, number>();
    const consumer = createInvocationConsumer(
      { connection: worker, keys, store },
      versionId,
      async (j, ctx) => {
        tries.set(j.requestId, ctx.attempt);
        // Every fourth request fails its first try: its retry goes through the delayed set and back (scripts that
        // name the request's record themselves).
        if (ctx.attempt === 1 && j.input.kind === 'json' && (j.input.value as { n: number }).n % 4 === 0) {
          throw new Error('first try fails');
        }
        await store.reportProgress(j.requestId, 50);
        await events.append(j.requestId, [{ data: 'tick' }, { data: 'done', last: true }]);
        return { ok: true, status: 200, contentType: 'application/json', body: Buffer.from('{"ok":1}') };
      },
      {
        concurrency: 4,
        workerId: 'w0',
        lockDurationMs: 5000,
        stalledIntervalMs: 1000,
        maxStalledCount: 1,
        failure: () => ({
          ok: false,
          code: 'INTERNAL',
          status: 500,
          contentType: 'text/plain',
          body: Buffer.from('failed'),
        }),
      },
    );
    try {
      const jobs = Array.from({ length: 20 }, (_, n) => job(versionId, undefined, n));
      for (const j of jobs) expect(await producer.enqueue(j)).toBe(true);
      for (const j of jobs) {
        let view = await store.take(j.requestId);
        for (let i = 0; i < 200 && view.kind === 'pending'; i++) {
          await new Promise((r) => setTimeout(r, 25));
          view = await store.take(j.requestId);
        }
        expect(view.kind).toBe('result');
        if (view.kind === 'result') expect(view.result.body.toString()).toBe('{"ok":1}');
        expect((await events.read(j.requestId, '0')).map((e) => e.data)).toEqual(['tick', 'done']);
      }
      expect(await producer.depth(versionId)).toBe(0);
      expect([...tries.values()].filter((t) => t === 2)).toHaveLength(5);

      // Attach, then cancel unless resumed: a two-key script in the request's slot.
      const reqId = jobs[0]?.requestId ?? '';
      const first = await events.attach(reqId);
      await events.attach(reqId);
      expect(await events.cancelUnlessResumed(reqId, first)).toBe(false);

      // Retiring finds the version's queues by SCAN on every primary.
      await producer.enqueue(job(versionId), { worker: 'w1' });
      const settled: string[] = [];
      await consumer.close();
      await producer.enqueue(job(versionId));
      await producer.retire(versionId, async (id) => {
        settled.push(id);
      });
      expect(settled).toHaveLength(2);
    } finally {
      await consumer.close();
      await producer.close();
      worker.disconnect();
    }
  });

  it('keeps the control plane working: registry, API keys, assets', async () => {
    const keys = createKeys(`c${randomUUID().slice(0, 6)}`);
    const registry = createFunctionRegistry(redis, keys);
    const fv = (name: string): FunctionVersion => ({
      id: randomUUID(),
      versionId: randomUUID(),
      name,
      ncaId: 'nca',
      createdAt: new Date().toISOString(),
      description: '',
      functionType: 'DEFAULT',
      apiBodyFormat: 'PREDICT_V2',
      inferenceUrl: '/v2/models',
      models: [],
      tags: [],
      spec: {},
      deployment: null,
      model: { name, version: '1', platform: 'onnxruntime_onnx', inputs: [], outputs: [] },
    });
    const a = fv('a');
    const b = fv('b');
    await registry.upsert(a);
    await registry.upsert(b);
    expect((await registry.list()).map((f) => f.name).sort()).toEqual(['a', 'b']);
    const machine = { pool: 'default', gpu: 'CPU', instanceType: 'cpu.x1' };
    await registry.heartbeat('w1', [a.versionId, b.versionId], 10_000, machine);
    expect(await registry.liveWorkers([a.versionId, b.versionId])).toEqual([['w1'], ['w1']]);
    expect(await registry.liveMachines()).toMatchObject([{ workerId: 'w1', ...machine }]);

    // The quota and index scripts: one slot ({fn}, {auth}), the account indexes built inside the script included.
    const quota = { functionsPerAccount: 3, versionsPerFunction: 1 };
    expect(await registry.create(fv('c'), { newFunction: true, quota })).toBe('created');
    expect(await registry.create({ ...a, versionId: randomUUID() }, { newFunction: false, quota })).toBe('versions');
    expect(await registry.create(fv('d'), { newFunction: true, quota })).toBe('functions');
    expect((await registry.accountFunctionIds('nca')).length).toBe(3);
    const parties = createFunctionAuthorizationStore(redis, keys);
    await parties.set(a.id, a.versionId, [{ ncaId: 'other' }]);
    expect(await parties.sharedWith('other')).toEqual([a.id]);
    await parties.forget(a.id);
    expect(await parties.sharedWith('other')).toEqual([]);

    const apiKeys = createApiKeyStore(redis, keys);
    const { key } = await apiKeys.create({ name: 'k', scopes: ['invoke_function'] });
    expect((await apiKeys.verify(key))?.scopes).toEqual(['invoke_function']);
    await expect(
      apiKeys.create({ name: 'k2', scopes: ['invoke_function'] }, { maxPerAccount: 1, homeNcaId: 'nca' }),
    ).rejects.toThrow(/holds 1 live API keys/);

    const assets = createAssetStore(redis, keys, { ttlSeconds: 60 });
    const created = await assets.create({
      ownerSubject: 'me',
      ncaId: 'nca',
      contentType: 'text/plain',
      description: 'd',
    });
    expect((await assets.list('me')).map((x) => x.assetId)).toEqual([created.assetId]);
  });
});
