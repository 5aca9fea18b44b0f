import { NvcfClient, NvcfError } from '@nvcf/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness } from '../harness.ts';
import { createRunGate, heldRequest } from '../held-model.ts';

/**
 * Aborting a call (or leaving a stream early) cancels its request on the gateway. What became of a request is read
 * back through its Idempotency-Key: the same call again names the same request, and gets its answer.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ heldModel: true, tritonExamples: true });
});
afterAll(async () => {
  await h?.close();
});

async function answerOf(nvcf: NvcfClient, functionId: string, body: unknown, idempotencyKey: string) {
  return nvcf.invoke(functionId, body, { idempotencyKey, pollSeconds: 30 }).catch((e: unknown) => e);
}

describe('an aborted invoke cancels its request', () => {
  it('aborted while the run is held, during the first long poll or after a 202', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });

    // No request id known yet: the first long poll is still open when the caller gives up.
    const first = new AbortController();
    const body = heldRequest([1, 1, 1, 1]);
    const key = crypto.randomUUID();
    const answer = nvcf.invoke(fnId('held'), body, { pollSeconds: 30, signal: first.signal, idempotencyKey: key });
    await gate.entered();
    first.abort(new Error('user gave up'));
    await expect(answer).rejects.toThrow('user gave up');
    const cancelled = await answerOf(nvcf, fnId('held'), body, key);
    expect(cancelled).toBeInstanceOf(NvcfError);
    expect(cancelled).toMatchObject({ status: 499, detail: expect.stringMatching(/cancelled by its owner/) });

    // After a 202: the id is known, the cancel goes straight to it.
    const second = new AbortController();
    const other = heldRequest([2, 2, 2, 2]);
    const otherKey = crypto.randomUUID();
    const polled = nvcf.invoke(fnId('held'), other, {
      pollSeconds: 1,
      signal: second.signal,
      idempotencyKey: otherKey,
      onProgress: () => second.abort(new Error('enough')),
    });
    await expect(polled).rejects.toThrow('enough');
    expect(await answerOf(nvcf, fnId('held'), other, otherKey)).toMatchObject({ status: 499 });

    await gate.open();
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
});

describe('nvcf.cancel', () => {
  it('cancels a queued request (the call waiting on it gets the 499); again is a 409, an unknown id a 404', async () => {
    const gw = await h.gateway();
    await (await h.worker()).close(); // the functions are published; no worker runs the request
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    let cancelled: Promise<void> | undefined;
    let requestId = '';
    const answer = nvcf
      .invoke(fnId('held'), heldRequest([4, 4, 4, 4]), {
        pollSeconds: 1,
        onProgress: (p) => {
          requestId = p.requestId;
          cancelled ??= nvcf.cancel(p.requestId);
        },
      })
      .catch((e: unknown) => e);
    const err = await answer;
    await cancelled;
    expect(err).toBeInstanceOf(NvcfError);
    expect(err).toMatchObject({ status: 499, requestId });
    expect((await nvcf.queues.depth(fnId('held'))).queues[0]?.queueDepth).toBe(0);
    await expect(nvcf.cancel(requestId)).rejects.toMatchObject({ status: 409 });
    await expect(nvcf.cancel(crypto.randomUUID())).rejects.toMatchObject({ status: 404 });
  });
});

describe('a stream left early cancels its request', () => {
  it('`break` after the first response stops a decoupled model whose next response is a minute away', async () => {
    const gw = await h.gateway();
    const worker = await h.worker();
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const slow = {
      inputs: [
        { name: 'IN', datatype: 'INT32', shape: [2], data: [7, 8] },
        { name: 'DELAY', datatype: 'UINT32', shape: [2], data: [0, 60_000] },
        { name: 'WAIT', datatype: 'UINT32', shape: [1], data: [0] },
      ],
    };
    const key = crypto.randomUUID();
    const seen: string[] = [];
    for await (const e of nvcf.stream(fnId('repeat_int32'), slow, { idempotencyKey: key })) {
      seen.push(e.data);
      break;
    }
    expect(seen[0]).toContain('"OUT"');
    expect(await answerOf(nvcf, fnId('repeat_int32'), slow, key)).toMatchObject({ status: 499 });
    await worker.close();
  });

  it('an abort before the first event cancels the request too', async () => {
    const gw = await h.gateway();
    const gate = await createRunGate();
    const worker = await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    const nvcf = new NvcfClient({ baseUrl: gw.url, apiKey: ADMIN_KEY });
    const stop = new AbortController();
    const body = heldRequest([3, 3, 3, 3]);
    const key = crypto.randomUUID();
    const reading = (async () => {
      for await (const _ of nvcf.stream(fnId('held'), body, { signal: stop.signal, idempotencyKey: key })) {
        // the held run sends nothing before the gate opens
      }
    })();
    await gate.entered();
    stop.abort(new Error('stop streaming'));
    await expect(reading).rejects.toThrow('stop streaming');
    expect(await answerOf(nvcf, fnId('held'), body, key)).toMatchObject({ status: 499 });
    await gate.open();
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
});
