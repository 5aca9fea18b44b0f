import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { startRedis } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GrpcClient, grpcClient, int32Bytes } from './grpc-test-fixture.ts';
import { ADMIN_KEY, createHarness, type Harness } from './harness.ts';

/**
 * No account can starve the others: a full Redis (issue: one account invoked a function no worker serves with 5 MB
 * bodies until a capped Redis refused writes, and every account's pexec, asset and key calls answered 500). A full
 * Redis is a 503 + Retry-After on every surface, as an unreachable one is; the bytes an account keeps waiting in the
 * queues are bounded (429 before anything is stored) while another account still invokes; and a deleted version's
 * waiting inputs leave Redis with it, not at their TTL.
 */
const MAXMEMORY = 64 * 1024 * 1024;
const ACCOUNT_BYTES = 3 * 1024 * 1024;
/** A body of about 1 MB: over JOB_INLINE_INPUT_BYTES, so kept beside its job. */
const BIG = JSON.stringify({ data: 'x'.repeat(1_000_000) });

let h: Harness;
/** As deployed: rate limiting on (its counter is the first write of a call). */
let gw: RunningGateway;
/** Rate limiting off: an invocation's first writes are its own (the queue's scripts). */
let unlimited: RunningGateway;
let grpc: GrpcClient;
let b: string;
let c: string;
let keys: ReturnType<typeof createKeys>;

interface Fn {
  id: string;
  versionId: string;
}

const call = (method: string, path: string, key: string, body?: unknown, base = gw.url, headers = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
const json = async <T>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};
/** A problem+json answer of `status` with Retry-After: its detail. */
const refused = async (res: Response, status: number): Promise<string> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  return (JSON.parse(text) as { detail: string }).detail;
};

const SCOPES = ['invoke_function', 'list_functions', 'register_function', 'deploy_function', 'delete_function'];
const mintKey = async (ncaId: string) =>
  (
    await json<{ value: string }>(
      await call('POST', '/v2/nvcf/keys', ADMIN_KEY, { name: ncaId, scopes: SCOPES, ncaId }),
      201,
    )
  ).value;

/** A container function no worker serves (no inference server answers for it): its requests wait. */
async function unserved(key: string, name: string): Promise<Fn> {
  const body = { name, inferenceUrl: '/echo', containerImage: 'registry.example/echo:1', containerArgs: 'node s.js' };
  const { function: fn } = await json<{ function: Fn }>(await call('POST', '/v2/nvcf/functions', key, body));
  const deployment = {
    deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1 }],
  };
  await json(await call('POST', `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`, key, deployment));
  return fn;
}

const invoke = (key: string, fn: Fn, base = gw.url) =>
  call('POST', `/v2/nvcf/pexec/functions/${fn.id}/versions/${fn.versionId}`, key, BIG, base, {
    'nvcf-poll-seconds': '1',
  });
/** Queued and waiting: its request id. */
const queued = async (res: Response): Promise<string> => {
  expect(res.status, await res.clone().text()).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
};

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await h.redis.info('memory'))?.[1]);

async function grpcInferStatus(key: string, functionId: string): Promise<{ code: number; retryAfter: unknown }> {
  const request = {
    model_name: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
    ],
    raw_input_contents: [int32Bytes(Array(16).fill(1)), int32Bytes(Array(16).fill(2))],
  };
  const { error } = await grpc.fail('ModelInfer', request, {
    metadata: { authorization: `Bearer ${key}`, 'function-id': functionId },
  });
  return { code: error.code, retryAfter: error.metadata.get('retry-after')[0] };
}

beforeAll(async () => {
  h = await createHarness({
    redisServer: () => startRedis({ args: ['--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction'] }),
  });
  keys = createKeys(h.keyPrefix);
  const bounds = { MAX_QUEUE_BYTES_PER_ACCOUNT: String(ACCOUNT_BYTES) };
  gw = await h.gateway(bounds);
  unlimited = await h.gateway({ ...bounds, RATE_LIMIT_PER_MINUTE: '0' });
  grpc = grpcClient(`127.0.0.1:${gw.grpcPort}`);
  b = await mintKey('team-b');
  c = await mintKey('team-c');
}, 60_000);
afterAll(async () => {
  grpc?.close();
  await h?.close();
});

describe('a full Redis', () => {
  it('answers pexec, asset and key creation 503 + Retry-After (problem+json), and gRPC UNAVAILABLE', async () => {
    const fn = await unserved(c, 'full-redis');
    const junk = `${h.keyPrefix}-junk`;
    // Fill Redis to its maxmemory the way the attacker did: until it refuses writes.
    const chunk = 'j'.repeat(256 * 1024);
    let n = 0;
    for (;;) {
      const full = await h.redis.set(`${junk}:${n++}`, chunk).then(
        () => false,
        (err: unknown) => /OOM/.test(String(err)),
      );
      if (full) break;
      expect(n).toBeLessThan((2 * MAXMEMORY) / chunk.length);
    }
    // Held full: memory freed meanwhile (a connection's buffers) must not let one call's writes through.
    await h.redis.config('SET', 'maxmemory', String((await usedMemory()) - 4 * 1024 * 1024));
    try {
      for (const base of [gw.url, unlimited.url]) {
        expect(await refused(await invoke(c, fn, base), 503)).toMatch(/Redis.*full/);
      }
      const asset = await call('POST', '/v2/nvcf/assets', c, { contentType: 'image/png', description: 'x' });
      expect(await refused(asset, 503)).toMatch(/Redis.*full/);
      const key = await call('POST', '/v2/nvcf/keys', ADMIN_KEY, { name: 'k', scopes: SCOPES, ncaId: 'team-d' });
      expect(await refused(key, 503)).toMatch(/Redis.*full/);
      expect(await grpcInferStatus(c, fn.id)).toEqual({ code: 14, retryAfter: '5' });
    } finally {
      await h.redis.config('SET', 'maxmemory', String(MAXMEMORY));
      for (let i = 0; i < n; i += 500) {
        await h.redis.del(...Array.from({ length: Math.min(500, n - i) }, (_, k) => `${junk}:${i + k}`));
      }
    }
    // Space again: the same calls are served.
    await queued(await invoke(c, fn, unlimited.url));
    await json(await call('POST', '/v2/nvcf/assets', c, { contentType: 'image/png', description: 'x' }));
  }, 60_000);
});

describe('bytes waiting in the queues', () => {
  it('an account past its bound is refused 429 before anything is stored; another account still invokes', async () => {
    const fb = await unserved(b, 'b-unserved');
    const fc = await unserved(c, 'c-unserved');
    const accepted = await Promise.all([invoke(b, fb), invoke(b, fb), invoke(b, fb)].map(async (r) => queued(await r)));
    const before = await usedMemory();
    const detail = await refused(await invoke(b, fb), 429);
    expect(detail).toMatch(/account 'team-b'.*bound/);
    expect(await usedMemory()).toBeLessThan(before + 500_000);
    // Another account is not held back by team-b's waiting bytes.
    await queued(await invoke(c, fc));
    // A request withdrawn (cancelled) gives its bytes back: the account invokes again.
    const cancel = await call('DELETE', `/v2/nvcf/pexec/status/${accepted[0]}`, b);
    expect(cancel.status).toBe(204);
    await new Promise((r) => setTimeout(r, 300));
    await queued(await invoke(b, fb));
  }, 60_000);

  it("deleting a version drops its waiting requests' inputs and counts from Redis at once", async () => {
    const e = await mintKey('team-e');
    const fn = await unserved(e, 'e-deleted');
    const ids = [await queued(await invoke(e, fn)), await queued(await invoke(e, fn))];
    for (const id of ids) expect(await h.redis.strlen(keys.requestInput(id))).toBeGreaterThan(900_000);
    expect(Number(await h.redis.hget(keys.queueBytes(fn.versionId), 'a:team-e'))).toBeGreaterThan(1_800_000);
    const before = await usedMemory();
    const deleted = await call('DELETE', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`, e);
    expect(deleted.status).toBe(204);
    for (const id of ids) expect(await h.redis.exists(keys.requestInput(id))).toBe(0);
    expect(await h.redis.exists(keys.queueBytes(fn.versionId))).toBe(0);
    expect(await usedMemory()).toBeLessThan(before - 1_800_000);
  }, 60_000);
});
