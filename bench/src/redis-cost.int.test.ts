import { type RedisHandle, startRedis } from '@nvcf/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisCostProbe,
  formatRedisCost,
  formatRedisTarget,
  parseRedisInfo,
  readRedisCounters,
  redisCost,
} from './redis-cost.ts';

/** RESP bytes of one command as a client sends it. */
const resp = (...args: string[]) =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`.length;

let server: RedisHandle;
let probe: Redis;
let client: Redis;

beforeAll(async () => {
  // A private server even when REDIS_URL is set: the counters must see this test's commands alone.
  server = await startRedis({ env: {} });
  probe = new Redis(server.url);
  client = new Redis(server.url);
  await Promise.all([probe.ping(), client.ping()]);
});
afterAll(async () => {
  probe?.disconnect();
  client?.disconnect();
  await server?.close();
});

describe('redisCost against a real redis-server', () => {
  it('counts each command, its bytes and its read exactly, the probe’s own INFO taken out', async () => {
    const before = await readRedisCounters(probe);
    let bytes = 0;
    for (let i = 0; i < 10; i++) {
      await client.set(`cost:k${i}`, 'v'.repeat(100));
      bytes += resp('set', `cost:k${i}`, 'v'.repeat(100));
    }
    for (let i = 0; i < 5; i++) {
      await client.get(`cost:k${i}`);
      bytes += resp('get', `cost:k${i}`);
    }
    const after = await readRedisCounters(probe);
    const cost = redisCost(before, after, { invocations: 5, payloadBytes: 100 });
    expect(cost.top).toEqual([
      { command: 'SET', perInvocation: 2 },
      { command: 'GET', perInvocation: 1 },
    ]);
    expect(cost.commands).toBe(3);
    expect(cost.scriptCalls).toBe(0);
    expect(cost.inputBytes).toBe(bytes / 5);
    expect(cost.beyondPayloadBytes).toBe(bytes / 5 - 100);
    expect(cost.beyondBodiesBytes).toBe(bytes / 5 - 100);
    // Either limit alone misses the target.
    expect(formatRedisTarget({ ...cost, commands: 26 })).toMatch(/MISSED$/);
    expect(formatRedisTarget({ ...cost, beyondBodiesBytes: 1025 })).toMatch(/MISSED$/);
    // A measured answer is payload too: the target is judged beyond both bodies.
    const answered = redisCost(before, after, { invocations: 5, payloadBytes: 100, answerBytes: 40 });
    expect(answered.beyondPayloadBytes).toBe(bytes / 5 - 100);
    expect(answered.beyondBodiesBytes).toBe(bytes / 5 - 140);
    expect(formatRedisTarget(answered)).toBe('target ≤ 25 cmds and ≤ 1 KB beyond request and answer: met');
    expect(formatRedisCost(answered)).toContain('KB beyond it and the 0.04 KB answer)');
    // One awaited command at a time: one socket read each.
    expect(cost.reads).toBe(3);
    // Each SET answered +OK, each GET the 100-byte value.
    expect(cost.outputBytes).toBe((10 * '+OK\r\n'.length + 5 * '$100\r\n\r\n'.length + 5 * 100) / 5);
    expect(cost.cpuUs).toBeGreaterThanOrEqual(0);
  });

  it('counts the commands a Lua script runs beside the EVAL itself (Redis 7: INFO does not tell them apart)', async () => {
    const before = await readRedisCounters(probe);
    for (let i = 0; i < 4; i++) {
      await client.eval(
        "redis.call('set', KEYS[1], ARGV[1]); redis.call('expire', KEYS[1], 60); return 1",
        1,
        'k',
        'v',
      );
    }
    const after = await readRedisCounters(probe);
    const cost = redisCost(before, after, { invocations: 4, payloadBytes: 0 });
    expect(Object.fromEntries(cost.top.map((t) => [t.command, t.perInvocation]))).toEqual({
      EVAL: 1,
      SET: 1,
      EXPIRE: 1,
    });
    expect(cost.commands).toBe(3);
    expect(cost.scriptCalls).toBe(1);
    expect(cost.scriptUs).toBeGreaterThan(0);
    expect(after.commandsProcessed - before.commandsProcessed - 1).toBe(12);
  });

  it('the probe reads the counters at the window’s edges and divides by the window’s completions', async () => {
    const p = createRedisCostProbe(probe, 10);
    p.start();
    await Promise.all(Array.from({ length: 6 }, (_, i) => client.incr(`cost:n${i % 2}`)));
    p.end();
    const cost = await p.cost(3);
    expect(cost?.commands).toBe(2);
    expect(cost?.top[0]).toEqual({ command: 'INCR', perInvocation: 2 });
    expect(formatRedisCost(cost as NonNullable<typeof cost>)).toMatch(
      /^redis\/inv over 3: 2\.0 cmds executed \(INCR 2\.0\), 0\.0 of them script calls, [\d.]+ socket reads, [\d.]+ KB in \(-?[\d.]+ KB beyond the 0\.01 KB payload\), [\d.]+ KB out, \d+ µs Redis CPU \(0 µs in scripts\)$/,
    );
    expect(formatRedisTarget(cost as NonNullable<typeof cost>)).toBe(
      'target ≤ 25 cmds and ≤ 1 KB beyond the request: met',
    );
    expect(await createRedisCostProbe(probe, 0).cost(3)).toBeUndefined();
  });
});

describe('parseRedisInfo', () => {
  it('reads commandstats, stats and cpu fields, subcommands kept apart', () => {
    const text = [
      '# Stats',
      'total_commands_processed:12',
      'total_net_input_bytes:345',
      'total_net_output_bytes:678',
      'total_reads_processed:9',
      '# CPU',
      'used_cpu_sys:1.500000',
      'used_cpu_user:2.250000',
      '# Commandstats',
      'cmdstat_evalsha:calls=4,usec=40,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
      'cmdstat_client|setname:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0',
      '',
    ].join('\r\n');
    expect(parseRedisInfo(text)).toEqual({
      calls: { evalsha: 4, 'client|setname': 2 },
      usec: { evalsha: 40, 'client|setname': 3 },
      commandsProcessed: 12,
      netInputBytes: 345,
      netOutputBytes: 678,
      readsProcessed: 9,
      cpuSeconds: 3.75,
    });
  });
});
