import { existsSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import type { RunningWorker } from '@nvcf/worker';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CreatedVersion,
  createFunction,
  deploy,
  echoCommand,
  echoRuntime,
  processModeEnv,
  serverWritableDir,
  statusOf,
  tempDir,
  until,
} from './container-harness.ts';
import { adminAuth, createHarness, gfetch, type Harness, pexec } from './harness.ts';

let h: Harness;
let gw: RunningGateway;
let work: Awaited<ReturnType<typeof tempDir>>;
let gates: { path: string };
let runtime: Awaited<ReturnType<typeof echoRuntime>>;
let echo: CreatedVersion;
let worker: RunningWorker;
const sickFile = () => join(gates.path, 'sick');

beforeAll(async () => {
  h = await createHarness();
  work = await tempDir('nvcf-container-work-');
  // Inside the work dir: a sandboxed server writes nowhere else.
  gates = { path: await serverWritableDir(work.path, 'gates') };
  runtime = await echoRuntime();
  gw = await h.gateway({ STREAM_RESUME_GRACE_MS: '0' });
  worker = await h.worker(processModeEnv(work.path));
  echo = await createFunction(gw.url, {
    name: 'echo',
    inferenceUrl: '/echo',
    inferencePort: 8000,
    healthUri: '/health',
    containerImage: 'nvcf/echo-server:dev',
    containerArgs: echoCommand(runtime),
    containerEnvironment: [{ key: 'ECHO_SICK_FILE', value: sickFile() }],
  });
  await deploy(gw.url, echo);
  await until(async () => (await statusOf(gw.url, echo)) === 'ACTIVE', 'the echo function to be ACTIVE');
}, 120_000);
afterAll(async () => {
  await h?.close();
  await work?.remove();
  await runtime?.remove();
});

const call = (body: object | string, headers: Record<string, string> = {}) =>
  pexec(gw.url, `/v2/nvcf/pexec/functions/${echo.id}`, body, { 'nvcf-poll-seconds': '60', ...headers });
const poll = (reqId: string) =>
  gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`, { headers: { 'nvcf-poll-seconds': '1' } });

describe('container functions: registration', () => {
  it('returns the container fields in the function DTO, without a model', async () => {
    const res = await gfetch(`${gw.url}/v2/nvcf/functions/${echo.id}/versions/${echo.versionId}`);
    const { function: fn } = (await res.json()) as { function: Record<string, unknown> };
    expect(fn).toMatchObject({
      inferenceUrl: '/echo',
      inferencePort: 8000,
      healthUri: '/health',
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: echoCommand(runtime),
      containerEnvironment: [{ key: 'ECHO_SICK_FILE', value: sickFile() }],
      apiBodyFormat: 'CUSTOM',
    });
    expect(fn.model).toBeUndefined();
  });

  it('refuses what it cannot run with a 400 that says why', async () => {
    const base = { name: 'no', inferenceUrl: '/x', containerImage: 'img' };
    const cases: [object, RegExp][] = [
      [{ ...base, containerImage: undefined, helmChart: 'c', helmChartServiceName: 's' }, /Helm chart functions/],
      [
        { ...base, health: { protocol: 'gRPC', uri: '/h', port: 8001, timeout: 'PT5S', expectedStatusCode: 0 } },
        /'expectedStatusCode'/,
      ],
      [
        { ...base, health: { protocol: 'gRPC', uri: '/h', port: 8001, timeout: 'PT5S', expectedStatusCode: 200 } },
        /'health.protocol' gRPC is not supported/,
      ],
      [{ ...base, inferenceUrl: 'echo' }, /'inferenceUrl' must be the path/],
    ];
    for (const [body, detail] of cases) {
      const res = await gfetch(`${gw.url}/v2/nvcf/functions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    }
  });
});

describe('container functions: the worker-side contract', () => {
  it("forwards the client's body and headers with NVCF's, never the credential", async () => {
    const res = await call({ hello: 'world' }, { 'x-client-header': 'kept', 'nvcf-function-id': 'spoofed' });
    expect(res.status).toBe(200);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const seen = (await res.json()) as {
      method: string;
      path: string;
      body: unknown;
      headers: Record<string, string>;
      env: Record<string, string>;
    };
    expect(seen).toMatchObject({ method: 'POST', path: '/echo', body: { hello: 'world' } });
    expect(seen.headers).toMatchObject({
      'x-client-header': 'kept',
      'content-type': 'application/json',
      'nvcf-reqid': reqId,
      'nvcf-ncaid': 'self-hosted',
      'nvcf-function-id': echo.id,
      'nvcf-function-version-id': echo.versionId,
      'nvcf-function-name': 'echo',
      'nvcf-asset-dir': join(work.path, reqId, 'input-assets'),
      'nvcf-large-output-dir': join(work.path, reqId, 'response'),
      'nvcf-max-response-size-bytes': String(5 * 1024 * 1024),
      'nvcf-instancetype': 'cpu.x1',
    });
    expect(seen.headers.authorization).toBeUndefined();
    // Process mode: the function's environment, NVCF's variables and the port; nothing else of the worker's.
    expect(seen.env).toMatchObject({
      ECHO_SICK_FILE: sickFile(),
      NVCF_FUNCTION_ID: echo.id,
      NVCF_FUNCTION_VERSION_ID: echo.versionId,
      NVCF_FUNCTION_NAME: 'echo',
      NVCF_NCA_ID: 'self-hosted',
      NVCF_INSTANCETYPE: 'cpu.x1',
      PORT: expect.stringMatching(/^\d+$/),
    });
    // The worker's process environment (this test's: vitest marks it) stays with the worker.
    expect(process.env.VITEST).toBeDefined();
    expect(seen.env.VITEST).toBeUndefined();
    expect(seen.headers['nvcf-function-asset-ids']).toBeUndefined();
    // The request's directories are gone once it is answered.
    expect(existsSync(join(work.path, reqId))).toBe(false);
  });

  it("forwards a JSON body as the client's bytes, not as the gateway parsed it", async () => {
    // Parsed and written again, 12345678901234567890 would lose digits and 1.50 become 1.5.
    const text = '{ "seed": 12345678901234567890, "x": 1.50 }';
    const res = await call(text);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { raw: string }).raw).toBe(text);
  });

  it('forwards a body too large to travel inside its job (kept beside it) byte for byte', async () => {
    const text = 'y'.repeat(200_000);
    const res = await call({ text });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: { text: string } }).body.text).toBe(text);
  });

  it('downloads referenced assets into NVCF-ASSET-DIR before the call and removes them after', async () => {
    const created = await gfetch(`${gw.url}/v2/nvcf/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'text/plain', description: 'input' }),
    });
    const asset = (await created.json()) as { assetId: string; uploadUrl: string };
    const upload = await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain', 'x-amz-meta-nvcf-asset-description': 'input' },
      body: 'asset bytes',
    });
    expect(upload.status).toBe(200);
    const res = await call({ action: 'assets' }, { 'nvcf-input-asset-references': asset.assetId });
    expect(res.status).toBe(200);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    expect(await res.json()).toEqual({
      assetDir: join(work.path, reqId, 'input-assets'),
      assetIds: asset.assetId,
      files: [{ name: asset.assetId, size: 11, text: 'asset bytes' }],
    });
    expect(existsSync(join(work.path, reqId))).toBe(false);
  });

  it('answers files written to NVCF-LARGE-OUTPUT-DIR as the zip + 302, with the body as <reqId>.response', async () => {
    const res = await call({ action: 'large-output', bytes: 3000 });
    expect(res.status).toBe(302);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const zipRes = await fetch(res.headers.get('location') ?? '');
    expect(zipRes.status).toBe(200);
    const zip = unzipSync(new Uint8Array(await zipRes.arrayBuffer()));
    const entries = Object.fromEntries(Object.entries(zip).map(([name, data]) => [name, strFromU8(data)]));
    expect(Object.keys(entries).sort()).toEqual([`${reqId}.response`, `${reqId}_result.json`].sort());
    expect(JSON.parse(entries[`${reqId}.response`] ?? '')).toEqual({ written: `${reqId}_result.json` });
    expect(entries[`${reqId}_result.json`]).toBe('x'.repeat(3000));
  });

  it('turns the progress file into 202 polls with NVCF-PERCENT-COMPLETE and the partial response', async () => {
    const gate = join(gates.path, 'progress-open');
    const accepted = await call({ action: 'progress', gate }, { 'nvcf-poll-seconds': '1' });
    expect(accepted.status).toBe(202);
    const reqId = accepted.headers.get('nvcf-reqid') ?? '';
    let partial: unknown;
    await until(async () => {
      const res = await poll(reqId);
      expect(res.status).toBe(202);
      if (res.headers.get('nvcf-percent-complete') !== '42') return false;
      partial = await res.json();
      return true;
    }, 'a 202 with the progress');
    expect(partial).toEqual({ step: 'halfway' });
    await writeFile(gate, '');
    let done: Response | undefined;
    await until(async () => {
      done = await poll(reqId);
      return done.status !== 202;
    }, 'the answer');
    expect(done?.status).toBe(200);
    expect(await done?.json()).toEqual({ done: true });
  });

  it("polls through the server's own 202 until it answers", async () => {
    const res = await call({ action: 'accept', polls: 3 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true, reqId: res.headers.get('nvcf-reqid') });
  });

  it("maps the server's errors as NVCF's worker does", async () => {
    const res = await call({ action: 'error', status: 422, error: 'Input value error: prompt too long' });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await res.json()).toMatchObject({
      type: 'urn:inference-service:problem-details:unprocessable-content',
      status: 422,
      detail: 'Input value error: prompt too long',
    });
    const failed = await call({ action: 'error', status: 503 });
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ type: 'urn:inference-service:problem-details:service-unavailable' });
  });
});

describe('container functions: server-sent events', () => {
  const sse = (body: object) => call(body, { accept: 'text/event-stream' });
  const dataOf = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim());

  it('streams events to an SSE client as they arrive', async () => {
    const gate = join(gates.path, 'sse-open');
    const res = await sse({ action: 'sse', events: 3, gate });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    // The first event arrives while the server still holds the rest.
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(dataOf(text)).toEqual(['{"n":0}']);
    await writeFile(gate, '');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(dataOf(text)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}', '[DONE]']);
  });

  it('collects the stream into one answer for a client that did not ask for SSE', async () => {
    const res = await call({ action: 'sse', events: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(dataOf(await res.text())).toEqual(['{"n":0}', '{"n":1}', '[DONE]']);
  });

  it('ends a stream the server broke off with an error event', async () => {
    const res = await sse({ action: 'sse', events: 3, resetAfter: 1 });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(dataOf(text)[0]).toBe('{"n":0}');
    expect(text).toMatch(
      /event: error\ndata: \{"type":"urn:inference-connection:problem-details:internal-server-error"/,
    );
  });

  it("stops the server's stream when the client closes early", async () => {
    const gate = join(gates.path, 'sse-early');
    const res = await sse({ action: 'sse', events: 3, gate });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    await until(async () => existsSync(`${gate}.closed`), 'the server to see its client leave');
    await writeFile(gate, '');
  });
});

describe('container functions: the server process', () => {
  it('answers a crash as an inference connection error, restarts the server, and serves again', async () => {
    const crashed = await call({ action: 'crash' });
    expect(crashed.status).toBe(500);
    expect(await crashed.json()).toMatchObject({
      type: 'urn:inference-connection:problem-details:internal-server-error',
      detail: 'Inference connection error while making inference request',
    });
    const again = await call({ after: 'restart' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ body: { after: 'restart' } });
  });

  it('is ACTIVE only while its server answers its health check', async () => {
    await writeFile(sickFile(), '');
    await until(async () => (await statusOf(gw.url, echo)) !== 'ACTIVE', 'the function to leave ACTIVE');
    await rm(sickFile());
    await until(async () => (await statusOf(gw.url, echo)) === 'ACTIVE', 'the function to be ACTIVE again');
  });

  it('stops the server on undeploy', async () => {
    const res = await call({});
    const port = Number(((await res.json()) as { env: { PORT: string } }).env.PORT);
    expect(await listening(port)).toBe(true);
    const undeploy = await gfetch(`${gw.url}/v2/nvcf/deployments/functions/${echo.id}/versions/${echo.versionId}`, {
      method: 'DELETE',
      headers: adminAuth,
    });
    expect(undeploy.status).toBe(200);
    await until(async () => !(await listening(port)), 'the server process to stop');
    // No request's directories, nor the server's own home, are left (the gates are the test's).
    await until(async () => (await readdir(work.path)).join() === 'gates', 'the work dir to hold only the gates');
  });
});

/** Whether the server still accepts connections (its pid is its sandbox's own, not this test's to signal). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('container functions: maxRequestConcurrency', () => {
  it('never has more requests in flight to one server than the deployment allows', async () => {
    const held = await createFunction(gw.url, {
      name: 'echo-held',
      inferenceUrl: '/echo',
      healthUri: '/health',
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: echoCommand(runtime),
    });
    await deploy(gw.url, held, 2);
    await until(async () => (await statusOf(gw.url, held)) === 'ACTIVE', 'echo-held to be ACTIVE');
    const gate = join(gates.path, 'held-open');
    const calls = Array.from({ length: 5 }, () =>
      pexec(gw.url, `/v2/nvcf/pexec/functions/${held.id}`, { action: 'hold', gate }, { 'nvcf-poll-seconds': '120' }),
    );
    const entered = async () => (await readdir(gates.path)).filter((f) => f.startsWith('held-open.entered-')).length;
    await until(async () => (await entered()) === 2, 'two calls to reach the server');
    await writeFile(gate, '');
    const answers = await Promise.all(calls);
    const held2 = await Promise.all(answers.map(async (r) => ((await r.json()) as { mostHeld: number }).mostHeld));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(Math.max(...held2)).toBe(2);
    expect(await entered()).toBe(5);

    // A worker that shuts down stops the servers it started.
    const echoed = await pexec(gw.url, `/v2/nvcf/pexec/functions/${held.id}`, {}, { 'nvcf-poll-seconds': '60' });
    const port = Number(((await echoed.json()) as { env: { PORT: string } }).env.PORT);
    expect(await listening(port)).toBe(true);
    await worker.close();
    await until(async () => !(await listening(port)), 'the server process to stop with its worker');
  });
});
