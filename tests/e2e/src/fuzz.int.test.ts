import type { RunningGateway } from '@nvcf/gateway';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, verId } from './harness.ts';

/**
 * Hostile input across the gateway's routes and a worker's inference port. `FUZZ_REQUESTS` raises the count
 * per surface (the suite sends 2 400 and 2 000; `FUZZ_REQUESTS=5000` makes the fault suite's 10 000).
 */

/** Deterministic, so a failure replays: mulberry32. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let h: Harness;
let gw: RunningGateway;
let worker: RunningWorker;

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  gw = await h.gateway({ MAX_REQUEST_BODY_BYTES: String(256 * 1024) });
});
afterAll(async () => {
  await h?.close();
});

describe('hostile input across the gateway routes', () => {
  it('a few thousand malformed requests: never a 5xx, and the gateway keeps serving', async () => {
    const rnd = prng(0xc0ffee);
    const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const ids = [
      fnId('simple'),
      verId('simple'),
      '00000000-0000-4000-8000-000000000000',
      '..%2F..%2Fetc%2Fpasswd',
      '%00',
      'x'.repeat(5000),
      '💥',
      '-1',
      'null',
      '%E0%A4%A',
      '*',
      'a:b:c',
    ];
    const paths = [
      () => `/v2/nvcf/pexec/functions/${pickOf(ids)}`,
      () => `/v2/nvcf/pexec/functions/${pickOf(ids)}/versions/${pickOf(ids)}`,
      () => `/v2/nvcf/pexec/status/${pickOf(ids)}`,
      () => `/v2/nvcf/exec/functions/${pickOf(ids)}`,
      () => `/v2/nvcf/exec/status/${pickOf(ids)}`,
      () => '/v2/nvcf/functions',
      () => `/v2/nvcf/functions/${pickOf(ids)}/versions`,
      () => `/v2/nvcf/functions/${pickOf(ids)}/versions/${pickOf(ids)}`,
      () => `/v2/nvcf/metadata/functions/${pickOf(ids)}/versions/${pickOf(ids)}`,
      () => `/v2/nvcf/deployments/functions/${pickOf(ids)}/versions/${pickOf(ids)}`,
      () => `/v2/nvcf/queues/functions/${pickOf(ids)}`,
      () => `/v2/nvcf/queues/${pickOf(ids)}/position`,
      () => `/v2/nvcf/${pickOf(ids)}`,
      () => '/health',
    ];
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const bodies = [
      () => '',
      () => '{',
      () => 'null',
      () => '[]',
      () => '"str"',
      () => deep(100_000),
      () => JSON.stringify({ inputs: 'x' }),
      () => JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1e12, 1e12], data: [] }] }),
      () => JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [-1], data: [1] }] }),
      () => JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'NOPE', shape: [1], data: [1] }] }),
      () => JSON.stringify({ inputs: [{ name: { $gt: '' }, datatype: 'INT32', shape: [1], data: [1] }] }),
      () => JSON.stringify({ requestBody: null, requestHeader: { pollDurationSeconds: -5 } }),
      () => JSON.stringify({ name: '../x', inferenceUrl: 1, models: 'all' }),
      () => JSON.stringify({ deploymentSpecifications: [{ minInstances: 'a' }] }),
      () => JSON.stringify({ tags: new Array(1000).fill('t') }),
      () => JSON.stringify({ __proto__: { admin: true }, constructor: { prototype: {} } }),
      () => 'x'.repeat(300 * 1024),
      () => Buffer.from(Array.from({ length: 512 }, () => Math.floor(rnd() * 256))).toString('latin1'),
    ];
    const headerSets = [
      () => ({}),
      () => ({ authorization: `Bearer ${ADMIN_KEY}` }),
      () => ({ authorization: `Bearer ${ADMIN_KEY}`, 'nvcf-poll-seconds': pickOf(['1', '-1', 'abc', '99999', '1.5']) }),
      () => ({ authorization: 'Bearer '.concat('a.b.c') }),
      () => ({ authorization: `Bearer ${'x'.repeat(8000)}` }),
      () => ({
        authorization: `Bearer ${ADMIN_KEY}`,
        'content-type': pickOf(['application/json', 'text/plain', 'application/octet-stream', '']),
      }),
      () => ({
        authorization: `Bearer ${ADMIN_KEY}`,
        'inference-header-content-length': pickOf(['0', '5', '-3', 'zz', '999999']),
      }),
      () => ({ authorization: `Bearer ${ADMIN_KEY}`, 'content-encoding': pickOf(['gzip', 'deflate', 'br']) }),
      () => ({ authorization: `Bearer ${ADMIN_KEY}`, 'x-huge': 'h'.repeat(12_000) }),
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
    const failures: string[] = [];
    const N = Number(process.env.FUZZ_REQUESTS ?? 2400);
    let sent = 0;
    const one = async () => {
      const method = pickOf(methods);
      const path = pickOf(paths)();
      const headers: Record<string, string> = { 'nvcf-poll-seconds': '1', ...pickOf(headerSets)() };
      const body = method === 'GET' ? undefined : pickOf(bodies)();
      try {
        const res = await fetch(`${gw.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
        await res.arrayBuffer();
        if (res.status >= 500)
          failures.push(`${res.status} ${method} ${path.slice(0, 80)} ${JSON.stringify(headers).slice(0, 80)}`);
      } catch (err) {
        // A refused connection would mean the server fell over; a reset after an oversized body is fine.
        if (String((err as Error).cause ?? err).includes('ECONNREFUSED')) failures.push(`refused: ${method} ${path}`);
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < N) {
          sent++;
          await one();
        }
      }),
    );
    expect(failures).toEqual([]);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    const ok = await fetch(`${gw.url}/v2/nvcf/pexec/functions/${fnId('simple')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
        ],
      }),
    });
    expect(ok.status).toBe(200);
  });

  it("a few thousand malformed requests to a worker's inference port: never a 5xx, and it keeps serving", async () => {
    const rnd = prng(0xbadcafe);
    const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const base = `http://127.0.0.1:${worker.ports.http}`;
    const models = ['simple', 'classifier', 'generative', 'nope', '..%2F..', '%00', 'x'.repeat(3000), '💥'];
    const versions = ['1', '2', '-1', '0', 'abc', '99999999999999999999'];
    const paths = [
      () => `/v2/models/${pickOf(models)}/infer`,
      () => `/v2/models/${pickOf(models)}/versions/${pickOf(versions)}/infer`,
      () => `/v2/models/${pickOf(models)}`,
      () => `/v2/models/${pickOf(models)}/ready`,
      () => `/v2/models/${pickOf(models)}/config`,
      () => `/v2/models/${pickOf(models)}/stats`,
      () => '/v2/models/stats',
      () => '/v2/repository/index',
      () => `/v2/repository/models/${pickOf(models)}/${pickOf(['load', 'unload'])}`,
      () => '/v2',
      () => `/v2/health/${pickOf(['live', 'ready', 'nope'])}`,
      () => `/api/infer/${pickOf(models)}`,
      () => `/api/status/${pickOf(models)}`,
      () => `/api/health/${pickOf(['live', 'ready'])}`,
      () => `/api/modelcontrol/${pickOf(['load', 'unload'])}/${pickOf(models)}`,
      () => '/api/repository/index',
    ];
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const bodies = [
      () => '',
      () => '{',
      () => deep(50_000),
      () => JSON.stringify({ inputs: 'x' }),
      () => JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1e12, 1e12], data: [] }] }),
      () =>
        JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill('x') }] }),
      () => JSON.stringify({ inputs: [{ name: 'TOKEN', datatype: 'INT64', shape: [1], data: [2 ** 70] }] }),
      () => JSON.stringify({ inputs: [], outputs: [{ name: 'OUTPUT0', parameters: { classification: -3 } }] }),
      () => JSON.stringify({ parameters: { config: '{"max_batch_size": -1}' } }),
      () => Buffer.from(Array.from({ length: 512 }, () => Math.floor(rnd() * 256))).toString('latin1'),
    ];
    const headerSets = [
      () => ({}),
      () => ({ 'inference-header-content-length': pickOf(['0', '5', '-3', 'zz', '999999']) }),
      () => ({ 'content-encoding': pickOf(['gzip', 'deflate']) }),
      () => ({ 'nv-inferrequest': pickOf(['batch_size: 1', 'input { name: "INPUT0" }', '{{{', 'batch_size: -1']) }),
      () => ({ 'content-type': pickOf(['application/json', 'application/octet-stream', 'text/plain']) }),
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE'] as const;
    const failures: string[] = [];
    const N = Number(process.env.FUZZ_REQUESTS ?? 2000);
    let sent = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < N) {
          sent++;
          const method = pickOf(methods);
          const path = pickOf(paths)();
          const headers: Record<string, string> = pickOf(headerSets)();
          const body = method === 'GET' ? undefined : pickOf(bodies)();
          try {
            const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
            const text = await res.text();
            // Triton's own answer to load/unload with model control off is a 503 (UNAVAILABLE): the protocol's
            // shape, expected here. Any other 5xx is a failure.
            const modelControlOff = res.status === 503 && text.includes('explicit model load / unload is not allowed');
            if (res.status >= 500 && res.status !== 501 && !modelControlOff)
              failures.push(`${res.status} ${method} ${path.slice(0, 80)} ${JSON.stringify(headers).slice(0, 80)}`);
          } catch (err) {
            if (String((err as Error).cause ?? err).includes('ECONNREFUSED'))
              failures.push(`refused: ${method} ${path}`);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
    expect((await fetch(`${base}/v2/health/live`)).status).toBe(200);
  });
});
