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

const status = (url: string, reqId: string, seconds: number) =>
  gfetch(`${url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': String(seconds) } });

const VALUES = [0.5, 1, 2, 3];

/**
 * A job is held in flight by the run gate (the test decides when it may finish), never by a model
 * that is "probably slow enough": on a fast machine that model finished inside the window.
 */
describe('worker failures', () => {
  it('a worker killed with SIGKILL mid-job: the request still completes on another worker', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const doomed = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('held')}`, heldRequest(VALUES), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    await gate.entered();
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // The survivor (no gate) finds the job's lock expired (stalled) and runs it again.
    const survivor = await h.worker();
    const done = await status(gw.url, reqId, 60);
    expect(done.status).toBe(200);
    const body = (await done.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    expect(body.outputs[0]).toMatchObject({ name: 'OUTPUT0', shape: [1, 4], data: VALUES });
    await survivor.close();
  });

  it('SIGTERM drains: the in-flight job finishes and is delivered before the worker exits', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('held')}`, heldRequest(VALUES), {
      'nvcf-poll-seconds': '1',
    });
    expect(res.status).toBe(202);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    await gate.entered();
    const polling = status(gw.url, reqId, 60);
    worker.child.kill('SIGTERM');
    // The worker stops taking jobs but waits for the one it holds; only then may that one finish.
    await new Promise((r) => setTimeout(r, 200));
    expect(worker.child.exitCode).toBeNull();
    await gate.open();
    // No other worker runs: the result can only come from the draining one.
    expect(await worker.exited).toBe(0);
    const done = await polling;
    expect(done.status).toBe(200);
    const body = (await done.json()) as { outputs: { data: number[] }[] };
    expect(body.outputs[0]?.data).toEqual(VALUES);
  });
});
