/**
 * `WORKER_FUNCTION_VERSIONS`: a worker pool serving one function version (on Kubernetes, a Deployment per version
 * that KEDA scales on that version's queue) takes that version's jobs and never another deployed version's.
 */

import { createFunctionRegistry } from '@nvcf/control-store';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, pexec, simpleRequest, verId } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  // Publish the functions, then leave no worker running: requests wait until a test starts one.
  await (await h.worker()).close();
});
afterAll(async () => {
  await h?.close();
});

const classifierRequest = {
  inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784], data: Array.from({ length: 784 }, () => 0.5) }],
};
const status = (url: string, reqId: string, seconds: number) =>
  gfetch(`${url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': String(seconds) } });

describe('a worker pool per function version', () => {
  it('serves its own version, leaves another deployed version’s job waiting; an unfiltered worker takes it', async () => {
    const gw = await h.gateway();
    // Queued before the pool worker starts: a worker consuming the classifier's queue would take it at once.
    const other = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('classifier')}`, classifierRequest, {
      'nvcf-poll-seconds': '1',
    });
    expect(other.status).toBe(202);
    const otherId = other.headers.get('nvcf-reqid') ?? '';

    const pool = await h.worker({ WORKER_FUNCTION_VERSIONS: verId('simple') });
    expect(pool.versionIds).toEqual([verId('simple')]);
    const own = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
      'nvcf-poll-seconds': '30',
    });
    expect(own.status).toBe(200);

    // The pool consumes (it just answered), yet the classifier's job is still unanswered, and the pool is no
    // instance of the classifier.
    expect((await status(gw.url, otherId, 1)).status).toBe(202);
    const registry = createFunctionRegistry(h.redis, createKeys(h.keyPrefix));
    const [classifierWorkers, simpleWorkers] = await registry.liveWorkers([verId('classifier'), verId('simple')]);
    expect(classifierWorkers).not.toContain(pool.workerId);
    expect(simpleWorkers).toContain(pool.workerId);

    // A worker serving every version takes the waiting job: it was runnable all along.
    const all = await h.worker();
    expect(all.versionIds).toContain(verId('classifier'));
    expect((await status(gw.url, otherId, 30)).status).toBe(200);
    await Promise.all([pool.close(), all.close()]);
  });
});
