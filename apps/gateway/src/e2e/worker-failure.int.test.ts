import { createKeys, createRequestStore } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec } from './harness.ts';
import { slowRequest } from './slow-model.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ slowModel: true });
});
afterAll(async () => {
  await h?.close();
});

/** Waits until the request is running on some worker. */
async function untilInProgress(reqId: string): Promise<void> {
  const store = createRequestStore(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 3600 });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const view = await store.take(reqId);
    if (view.kind === 'pending' && view.state === 'in-progress') return;
    if (view.kind !== 'pending') throw new Error(`request settled early: ${view.kind}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('request never started');
}

const status = (url: string, reqId: string, seconds: number) =>
  gfetch(`${url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': String(seconds) } });

describe('worker failures', () => {
  it('a worker killed with SIGKILL mid-job: the request still completes on another worker', async () => {
    const gw = await h.gateway();
    const doomed = await h.spawnWorker();
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('slow')}`, slowRequest(96), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    await untilInProgress(reqId);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // The survivor finds the job's lock expired (stalled) and runs it again.
    const survivor = await h.worker();
    const done = await status(gw.url, reqId, 60);
    expect(done.status).toBe(200);
    const body = (await done.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    expect(body.outputs[0]?.shape).toEqual([96, 1024]);
    expect(body.outputs[0]?.data.slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 0]);
    await survivor.close();
  });

  it('SIGTERM drains: the in-flight job finishes and is delivered before the worker exits', async () => {
    const gw = await h.gateway();
    const worker = await h.spawnWorker();
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('slow')}`, slowRequest(96), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    await untilInProgress(reqId);
    const polling = status(gw.url, reqId, 60);
    worker.child.kill('SIGTERM');
    // No other worker runs: the result can only come from the draining one.
    expect(await worker.exited).toBe(0);
    const done = await polling;
    expect(done.status).toBe(200);
    const body = (await done.json()) as { outputs: { shape: number[] }[] };
    expect(body.outputs[0]?.shape).toEqual([96, 1024]);
  });
});
