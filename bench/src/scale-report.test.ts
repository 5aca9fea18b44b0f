import { describe, expect, it } from 'vitest';
import type { RedisCost } from './redis-cost.ts';
import { capacityOf, compareScale, productCpuPercent, type ScaleRow, shardCapacity } from './scale-report.ts';

const cost = (cpuUs: number, invocations: number, commands = 50): RedisCost => ({
  invocations,
  commands,
  top: [],
  scriptCalls: 6,
  reads: 4,
  inputBytes: 5000,
  payloadBytes: 200,
  beyondPayloadBytes: 4800,
  answerBytes: 0,
  beyondBodiesBytes: 4800,
  outputBytes: 1500,
  cpuUs,
  scriptUs: cpuUs / 2,
});

const row = (model: string, gateways: number, workers: number, rps: number, p50Ms: number, redis?: RedisCost) =>
  ({ model, shape: { gateways, workers }, rps, p50Ms, cpuPercent: {}, ...(redis ? { redis } : {}) }) as ScaleRow;

describe('scale report', () => {
  it('divides every row by the first, measured in the same run', () => {
    const rows = [row('m', 1, 1, 100, 80), row('m', 1, 2, 150, 50), row('m', 2, 2, 140, 60)];
    expect(compareScale(rows)).toEqual([
      { shape: { gateways: 1, workers: 1 }, rpsRatio: 1, p50Ratio: 1 },
      { shape: { gateways: 1, workers: 2 }, rpsRatio: 1.5, p50Ratio: 0.625 },
      { shape: { gateways: 2, workers: 2 }, rpsRatio: 1.4, p50Ratio: 0.75 },
    ]);
    expect(compareScale([])).toEqual([]);
  });

  it('turns Redis CPU per invocation into invocations per shard and shards for 10k and 100k inv/s', () => {
    expect(shardCapacity('simple', '1x1 window', cost(400, 1000))).toEqual({
      model: 'simple',
      basis: '1x1 window',
      redisCpuUsPerInvocation: 400,
      commandsPerInvocation: 50,
      invocationsPerShard: 2500,
      commandsPerShard: 125_000,
      shardsFor10k: 4,
      shardsFor100k: 40,
    });
  });

  it('counts the product’s processes, not the load generator or the neighbours, as the cores it used', () => {
    expect(
      productCpuPercent({ 'gateway-1': 40, 'gateway-2': 30, 'worker-1': 50, redis: 10, bench: 20, other: 90 }),
    ).toBe(130);
  });

  it('takes each model’s window with the most invocations (background spread thinnest)', () => {
    const caps = capacityOf([
      row('a', 1, 1, 10, 1, cost(1000, 100)),
      row('a', 1, 4, 30, 1, cost(800, 300)),
      row('b', 1, 1, 10, 1, cost(500, 50)),
      row('c', 1, 1, 10, 1),
    ]);
    expect(caps.map((c) => [c.model, c.basis, c.redisCpuUsPerInvocation])).toEqual([
      ['a', '1x4 window', 800],
      ['b', '1x1 window', 500],
    ]);
  });
});
