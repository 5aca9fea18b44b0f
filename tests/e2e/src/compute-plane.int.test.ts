import { availableParallelism } from 'node:os';
import { freePort } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec } from './harness.ts';
import { createRunGate, heldRequest } from './held-model.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ heldModel: true });
});
afterAll(async () => {
  await h?.close();
});

const heldPath = `/v2/nvcf/pexec/functions/${fnId('held')}`;
const status = (url: string, reqId: string, seconds: number) =>
  gfetch(`${url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': String(seconds) } });

async function accepted(gatewayUrl: string, values: number[]): Promise<string> {
  const res = await pexec(gatewayUrl, heldPath, heldRequest(values), { 'nvcf-poll-seconds': '1' });
  expect(res.status).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
}

/**
 * A held run blocks its thread the way a long native `session.run` does (run-gate.ts), for as long as the
 * test says: what must keep working around it is checked while it is held, with no guess at CPU speed.
 */
describe('inference off the event loop', () => {
  it('answers /v2/health/live promptly while a run holds its instance', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const port = await freePort();
    const worker = await h.spawnWorker({ ...gate.env, KSERVE_HTTP_PORT: String(port) }, { execArgv: gate.execArgv });
    const reqId = await accepted(gw.url, [1, 2, 3, 4]);
    await gate.entered();
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const live = await fetch(`http://127.0.0.1:${port}/v2/health/live`);
      latencies.push(performance.now() - t0);
      expect(live.status).toBe(200);
    }
    // Every probe was answered while the run was still held; the median keeps one scheduler hiccup out.
    expect(await gate.enteredCount()).toBe(1);
    // A model whose config names no instance count runs one instance per core here.
    const config = (await (await fetch(`http://127.0.0.1:${port}/v2/models/held/config`)).json()) as {
      instance_group: { count: number; kind: string }[];
    };
    expect(config.instance_group).toMatchObject([{ count: availableParallelism(), kind: 'KIND_CPU' }]);
    latencies.sort((a, b) => a - b);
    expect(latencies[2]).toBeLessThan(50);
    await gate.open();
    const done = await status(gw.url, reqId, 30);
    expect(done.status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('a run that outlasts WORKER_LOCK_DURATION_MS keeps its lock: the job is not delivered twice', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    // Two gated workers with short locks: a lost lock would hand the job to the other, whose run would reach the gate.
    const fast = { ...gate.env, WORKER_LOCK_DURATION_MS: '500', WORKER_STALLED_INTERVAL_MS: '500' };
    const a = await h.spawnWorker(fast, { execArgv: gate.execArgv });
    const b = await h.spawnWorker(fast, { execArgv: gate.execArgv });
    const values = [4, 3, 2, 1];
    const reqId = await accepted(gw.url, values);
    await gate.entered();
    // Four lock durations and several stalled-job checks go by while the run is held.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await gate.enteredCount()).toBe(1);
    await gate.open();
    const done = await status(gw.url, reqId, 30);
    expect(done.status).toBe(200);
    expect(((await done.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data).toEqual(values);
    expect(await gate.enteredCount()).toBe(1);
    for (const w of [a, b]) w.child.kill('SIGTERM');
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
  });

  it('with 2 instances two long requests run at the same time', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    // `held` names no instance count: it gets WORKER_CPU_INSTANCES of them.
    const worker = await h.spawnWorker({ ...gate.env, WORKER_CPU_INSTANCES: '2' }, { execArgv: gate.execArgv });
    const first = await accepted(gw.url, [1, 1, 1, 1]);
    const second = await accepted(gw.url, [2, 2, 2, 2]);
    // Both runs are inside the model at once; one at a time, the second could not start before the gate opens.
    await gate.entered(2);
    await gate.open();
    for (const [reqId, v] of [
      [first, 1],
      [second, 2],
    ] as const) {
      const done = await status(gw.url, reqId, 30);
      expect(done.status).toBe(200);
      expect(((await done.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data).toEqual([v, v, v, v]);
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});
