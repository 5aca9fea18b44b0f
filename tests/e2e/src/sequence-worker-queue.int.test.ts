import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFunctionRegistry } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, type Harness, verId } from './harness.ts';

/**
 * Sequence routing gives each worker a queue of its own per sequence model (the requests of the sequences it owns).
 * Those keys once outlived their worker forever, even after a clean SIGTERM. Now they expire unless their worker
 * refreshes them, a clean shutdown deletes them once drained, and a sequence whose owner left is not routed to its
 * queue any more (its request is answered, not left waiting in a queue no one reads).
 */
let h: Harness;
let gw: RunningGateway;
/** Two models only (`simple`, which the harness waits for, and the sequence model): the worker is up in seconds. */
let repository: string;
const MODEL = 'simple_dyna_sequence';

beforeAll(async () => {
  h = await createHarness({ tritonExamples: true });
  repository = await mkdtemp(join(tmpdir(), 'nvcf-seq-'));
  for (const model of ['simple', MODEL]) {
    await cp(join(h.modelRepository, model), join(repository, model), { recursive: true });
  }
  gw = await h.gateway();
});
afterAll(async () => {
  await h?.close();
  if (repository) await rm(repository, { recursive: true, force: true });
});

const step = (id: number, value: number, flags: Record<string, boolean> = {}) =>
  fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId(MODEL)}`, {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/json', 'nvcf-poll-seconds': '30' },
    body: JSON.stringify({
      parameters: { sequence_id: id, ...flags },
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
    }),
  });

describe("a worker's own sequence queue", () => {
  it('expires while the worker lives, is gone after a clean SIGTERM, and a sequence it owned is answered', async () => {
    const keys = createKeys(h.keyPrefix);
    const registry = createFunctionRegistry(h.redis, keys);
    const worker = await h.spawnWorker({ MODEL_REPOSITORY: repository });
    const versionId = verId(MODEL);
    for (let i = 0; !(await registry.liveWorkers([versionId]))[0]?.includes(worker.workerId); i++) {
      if (i > 300) throw new Error(`${MODEL} never became live on the worker`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const own = keys.queue(versionId, worker.workerId);
    // The only live worker owns the sequence: its START and later requests go through its own queue.
    const start = await step(31, 5, { sequence_start: true });
    expect(start.status, await start.clone().text()).toBe(200);
    const middle = await step(31, 2);
    expect(middle.status, await middle.clone().text()).toBe(200);
    const ttl = await h.redis.pttl(own.stream);
    expect(ttl).toBeGreaterThan(0);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(await h.redis.exists(own.stream, own.delayed, own.delayedJobs)).toBe(0);

    // The owner left with the sequence's state: its next request is refused by a live worker, not left waiting.
    await h.worker({ MODEL_REPOSITORY: repository });
    const after = await step(31, 1, { sequence_end: true });
    expect(after.status).toBe(400);
    expect(await after.text()).toMatch(/START/);
    expect(await h.redis.exists(own.stream)).toBe(0);
  });
});
