import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type RedisHandle, startRedis, waitForPing } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys, newRequestId } from './keys.ts';
import { createRedis, type RedisClient } from './redis-connection.ts';
import { createRequestStore } from './request-store.ts';

/**
 * `redis+sentinel://` finds the primary through a real Redis Sentinel (redis-server --sentinel,
 * https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/) and keeps the product's scripts working.
 */
let primary: RedisHandle;
let sentinel: ChildProcess;
let sentinelPort: number;
let dir: string;
let redis: RedisClient;

beforeAll(async () => {
  primary = await startRedis({ env: {} });
  dir = await mkdtemp(join(tmpdir(), 'nvcf-sentinel-'));
  sentinelPort = await freePort();
  const conf = join(dir, 'sentinel.conf');
  // Sentinel rewrites its own config file: it must be a writable file of its own.
  await writeFile(
    conf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor mymaster 127.0.0.1 ${new URL(primary.url).port} 1`,
      'sentinel down-after-milliseconds mymaster 2000',
    ].join('\n'),
  );
  sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  await waitForPing(`redis://127.0.0.1:${sentinelPort}`, sentinel);
});
afterAll(async () => {
  redis?.disconnect();
  sentinel?.kill('SIGTERM');
  await primary?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('on a primary under Sentinel', () => {
  it('asks the sentinel for the primary and runs the request store on it', async () => {
    redis = createRedis(`redis+sentinel://127.0.0.1:${sentinelPort}/mymaster`);
    const keys = createKeys('s1');
    const store = createRequestStore(redis, keys, { ttlSeconds: 60 });
    const versionId = crypto.randomUUID();
    const requestId = newRequestId(versionId);
    expect(await store.create(requestId, crypto.randomUUID(), versionId)).toBe(true);
    await store.complete(requestId, { ok: true, status: 200, contentType: 'text/plain', body: Buffer.from('ok') });
    const view = await store.take(requestId);
    expect(view.kind === 'result' && view.result.body.toString()).toBe('ok');
    // The data sits on the primary the sentinel named.
    const direct = createRedis(primary.url);
    expect(await direct.exists(keys.request(requestId))).toBe(1);
    direct.disconnect();
  });
});
