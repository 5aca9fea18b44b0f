import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { type RedisClusterHandle, startRedisCluster } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, verId } from './harness.ts';

/**
 * A primary of the Redis Cluster fails over to its replica (`CLUSTER FAILOVER`, as an operator or a rolling
 * upgrade does) while invocations stream in: every request the gateway acknowledged (a 200, or a 202 with a request
 * id) ends with its own correct answer. A request refused during the switch (503) was never acknowledged.
 */
let cluster: RedisClusterHandle;
let h: Harness;
let gw: RunningGateway;

beforeAll(async () => {
  h = await createHarness({
    redisServer: async () => {
      cluster = await startRedisCluster();
      return cluster;
    },
  });
  await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

/** `simple` adds its inputs: OUTPUT0[i] = k + i + 1 identifies the request that asked. */
const request = (k: number) => ({
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => k + i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
});
const expected = (k: number) => Array.from({ length: 16 }, (_, i) => k + i + 1);
const output0 = async (res: Response) =>
  ((await res.json()) as { outputs?: { name: string; data: number[] }[] }).outputs?.find((o) => o.name === 'OUTPUT0')
    ?.data;

describe('Redis Cluster failover under load', () => {
  it('loses nothing it acknowledged while the primary of the queue’s slot fails over', async () => {
    const keys = createKeys(h.keyPrefix);
    const queueKey = keys.queue(verId('simple')).stream;
    const acknowledged = new Map<number, { reqId?: string; answer?: number[] }>();
    const refused: number[] = [];
    let next = 0;
    let stop = false;
    const client = async () => {
      while (!stop) {
        const k = next++;
        const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, request(k), {
          'NVCF-POLL-SECONDS': '1',
        });
        if (res.status === 200) acknowledged.set(k, { answer: await output0(res) });
        else if (res.status === 202) acknowledged.set(k, { reqId: res.headers.get('nvcf-reqid') ?? '' });
        else {
          // Refused, not accepted: the client knows to retry. Anything but "unavailable" is a defect.
          expect(res.status, await res.text()).toBe(503);
          refused.push(k);
        }
      }
    };
    const clients = Array.from({ length: 4 }, client);
    // Load before, during and after the switch.
    while (acknowledged.size < 40) await new Promise((r) => setTimeout(r, 20));
    const { from, to } = await cluster.failover(queueKey);
    expect(to).not.toBe(from);
    const afterSwitch = acknowledged.size;
    while (acknowledged.size < afterSwitch + 40) await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await Promise.all(clients);

    for (const [k, ack] of acknowledged) {
      let answer = ack.answer;
      if (ack.reqId) {
        expect(ack.reqId).toMatch(/^[0-9a-f-]{36}$/);
        for (let i = 0; i < 100 && answer === undefined; i++) {
          const res = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${ack.reqId}`, {
            headers: { 'NVCF-POLL-SECONDS': '1' },
          });
          if (res.status === 200) answer = await output0(res);
          else expect(res.status).toBe(202);
        }
      }
      expect(answer, `request ${k}`).toEqual(expected(k));
    }
    expect(acknowledged.size).toBeGreaterThanOrEqual(80);
    // The switch is brief: most calls in flight ride it out instead of being refused.
    expect(refused.length).toBeLessThan(acknowledged.size);
  });
});
