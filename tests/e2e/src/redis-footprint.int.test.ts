import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, type Harness, pexec, simpleRequest, verId } from './harness.ts';

/**
 * What a finished invocation leaves in Redis: its request record (a tombstone once delivered), with its
 * TTL. Not the input, not the job, not a client header.
 */
let h: Harness;
let gw: RunningGateway;
let worker: RunningWorker;

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
});

/** Every key of this harness's key space, with everything stored under it, as text. */
async function dump(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await h.redis.scan(cursor, 'MATCH', `${h.keyPrefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await h.redis.type(key);
      let value = '';
      if (type === 'string') value = (await h.redis.get(key)) ?? '';
      else if (type === 'hash') value = JSON.stringify(await h.redis.hgetall(key));
      else if (type === 'list') value = JSON.stringify(await h.redis.lrange(key, 0, -1));
      else if (type === 'set') value = JSON.stringify(await h.redis.smembers(key));
      else if (type === 'zset') value = JSON.stringify(await h.redis.zrange(key, 0, -1));
      else if (type === 'stream') value = JSON.stringify(await h.redis.xrange(key, '-', '+'));
      out.set(key, value);
    }
  } while (cursor !== '0');
  return out;
}

describe("a finished invocation's footprint in Redis", () => {
  it('keeps no input, no job and no client header; memory returns to where it was', async () => {
    const rows = 64;
    const marker = 0.123456789;
    const data = Array.from({ length: rows * 784 }, (_, i) => (i === 5 ? marker : (i % 13) / 13));
    const body = { inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [rows, 784], data }] };
    const path = `/v2/nvcf/pexec/functions/${fnId('classifier')}`;
    // Warm up (queue keys, scripts), then measure.
    expect((await pexec(gw.url, path, body)).status).toBe(200);
    const before = Number(/used_memory:(\d+)/.exec(await h.redis.info('memory'))?.[1]);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await pexec(gw.url, path, body, { 'x-secret-token': 'hunter2-do-not-store' });
      expect(res.status).toBe(200);
      ids.push(res.headers.get('nvcf-reqid') ?? '');
    }
    const after = Number(/used_memory:(\d+)/.exec(await h.redis.info('memory'))?.[1]);
    const everything = await dump();
    for (const [key, value] of everything) {
      expect(value, key).not.toContain('hunter2');
      expect(value, key).not.toContain(String(marker));
    }
    // Nothing of their jobs is left: no entry in the queue's stream (dumped above), no key named after them.
    for (const id of ids)
      expect([...everything.keys()].filter((k) => k.endsWith(`:${id}`) && !k.includes(':req:'))).toEqual([]);
    // Ten ~0.4 MB inputs came and went: what stays is ten small tombstones.
    expect(after - before).toBeLessThan(1024 * 1024);
  });

  it('a large input waits beside its job, not inside it, and goes when the request is answered', async () => {
    await worker.close(); // the job must wait
    const rows = 64;
    const body = {
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [rows, 784], data: Array(rows * 784).fill(0.5) }],
    };
    const sent = Buffer.byteLength(JSON.stringify(body));
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, body, {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const keys = createKeys(h.keyPrefix);
    expect(await h.redis.strlen(keys.requestInput(reqId))).toBe(sent);
    const entries = await h.redis.xrange(keys.queue(verId('classifier')).stream, '-', '+');
    const entry = entries.find(([, fields]) => fields[1] === reqId)?.[1] ?? [];
    const jobData = entry[entry.indexOf('j') + 1] ?? '';
    expect(jobData.length).toBeLessThan(2048);
    expect(JSON.parse(jobData)).toMatchObject({ input: { kind: 'stored', format: 'json' } });

    worker = await h.worker();
    const answered = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, {
      headers: { ...adminAuth, 'nvcf-poll-seconds': '30' },
    });
    expect(answered.status).toBe(200);
    const out = (await answered.json()) as { outputs: { shape: number[] }[] };
    expect(out.outputs[0]?.shape).toEqual([rows, 10]);
    expect(await h.redis.exists(keys.requestInput(reqId))).toBe(0);
  });

  it("a deleted version's queue goes, and the requests still waiting in it are answered", async () => {
    await worker.close(); // the request must still be waiting when its version goes
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const queue = createKeys(h.keyPrefix).queue(verId('simple'));
    const queueKeys = async () =>
      [...(await dump()).keys()].filter((k) => [queue.stream, queue.delayed, queue.delayedJobs].includes(k));
    expect((await queueKeys()).length).toBeGreaterThan(0);
    const deleted = await fetch(`${gw.url}/v2/nvcf/functions/${fnId('simple')}/versions/${verId('simple')}`, {
      method: 'DELETE',
      headers: adminAuth,
    });
    expect(deleted.status).toBe(204);
    expect(await queueKeys()).toEqual([]);
    const answer = await fetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: adminAuth });
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(/was deleted before this request ran/);
  });
});
