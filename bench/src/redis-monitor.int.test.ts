import { type RedisHandle, startRedis } from '@nvcf/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMonitorSummary, monitorInvocations, startMonitor, summarizeMonitor } from './redis-monitor.ts';

let server: RedisHandle;
const clients: Redis[] = [];
const named = async (connectionName: string) => {
  const c = new Redis(server.url, { connectionName });
  clients.push(c);
  await c.ping();
  return c;
};

beforeAll(async () => {
  server = await startRedis({ env: {} });
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.close();
});

describe('MONITOR attribution against a real redis-server', () => {
  it('names each command’s connection and charges a script’s commands to the connection that ran it', async () => {
    const gateway = await named('gateway');
    const worker = await named('worker');
    const blocking = await named('nvcf:bull:e2FiY30=');
    const recording = await startMonitor(server.url);
    for (let i = 0; i < 2; i++) {
      await recording.mark(`inv-${i}`);
      await gateway.eval("redis.call('hset', KEYS[1], 'a', '1'); redis.call('expire', KEYS[1], 60)", 1, `m:${i}`);
      await gateway.set(`m:s${i}`, 'v');
      await worker.get(`m:s${i}`);
      await blocking.llen('m:list');
    }
    const events = await recording.stop();
    expect(events.filter((e) => e.source === 'mark').map((e) => e.args[0])).toEqual(['inv-0', 'inv-1']);
    const summary = summarizeMonitor(events, 2);
    expect(summary.clientCommands).toBe(4);
    expect(summary.scriptCommands).toBe(2);
    expect(summary.bySource).toEqual({
      gateway: { eval: 1, set: 1 },
      'lua:gateway': { hset: 1, expire: 1 },
      worker: { get: 1 },
      'bullmq-blocking': { llen: 1 },
    });
    expect(formatMonitorSummary(summary, 'sequential')).toBe(
      'MONITOR over 2 sequential: 4.0 client cmds/inv (gateway 2.0, worker 1.0, bullmq-blocking 1.0) + 2.0 run inside scripts = 6.0',
    );
  });

  it('records a fixed number of invocations at the asked concurrency, and fails with a failed call', async () => {
    const client = await named('driver');
    let n = 0;
    const summary = await monitorInvocations(
      server.url,
      async () => {
        await client.incr(`m:n${n++ % 3}`);
        await client.get('m:n0');
      },
      { invocations: 6, concurrency: 3, settleMs: 0 },
    );
    expect(n).toBe(6);
    expect(summary.bySource).toEqual({ driver: { incr: 1, get: 1 } });
    await expect(
      monitorInvocations(server.url, () => Promise.reject(new Error('boom')), { invocations: 2, concurrency: 1 }),
    ).rejects.toThrow('boom');
  });
});
