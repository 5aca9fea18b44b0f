import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import {
  createEventStream,
  createKeys,
  createRedis,
  createRequestStore,
  createResultObjectIndex,
  type InvocationJob,
  type InvocationProcessor,
  type RedisClient,
  successResult,
} from '@nvcf/queue';
import { createLogger } from '@nvcf/service-kit';
import { openObjectStore } from '@nvcf/storage';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLargeResultStore } from '../large-results.ts';
import { createContainerProcessor } from './container-processor.ts';
import type { ServerInstance } from './container-servers.ts';
import { InferenceConnectionError } from './inference-call.ts';
import { createSharedTicker } from './shared-ticker.ts';

let server: RedisHandle;
let redis: RedisClient;
let dir: string;
const closers: (() => Promise<unknown>)[] = [];
const keys = createKeys(`t${Math.random().toString(36).slice(2, 10)}`);

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url);
  dir = await mkdtemp(join(tmpdir(), 'nvcf-container-processor-'));
});
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});
afterAll(async () => {
  redis?.disconnect();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const container = ContainerSpec.parse({
  image: 'img',
  health: { uri: '/health', timeoutMs: 1000, expectedStatusCode: 200 },
});
const fv = {
  ...FunctionVersion.parse({
    id: randomUUID(),
    versionId: randomUUID(),
    name: 'unit',
    ncaId: 'nca',
    createdAt: new Date().toISOString(),
    inferenceUrl: '/infer',
    deployment: null,
    container,
  }),
  container,
};

/** A processor for `fv` whose server is at `base`; `healthy: false` as no server is up. */
async function processorFor(
  base: URL,
  opts: { healthy?: boolean; timeoutMs?: number; traceContext?: () => InvocationJob['trace'] } = {},
) {
  const objects = await openObjectStore({ kind: 'local', dir: join(dir, 'objects') });
  const instance: ServerInstance = { base, healthy: opts.healthy ?? true, hold: () => () => {} };
  return createContainerProcessor({
    fv,
    server: () => instance,
    store: createRequestStore(redis, keys, { ttlSeconds: 600 }),
    events: createEventStream(redis, keys, { ttlSeconds: 600 }),
    objects,
    largeResults: createLargeResultStore({
      objects,
      index: createResultObjectIndex(redis, keys),
      maxDirectBytes: 1024,
      ttlSeconds: 600,
    }),
    logger: createLogger({ name: 'test', level: 'silent' }),
    workDir: join(dir, 'work'),
    timeoutMs: opts.timeoutMs ?? 60_000,
    maxResponseBytes: 1024,
    ticker: createSharedTicker(50),
    ...(opts.traceContext ? { traceContext: opts.traceContext } : {}),
  });
}

/** A new request, created as the gateway creates it, and its job. */
async function newJob(): Promise<InvocationJob> {
  const requestId = randomUUID();
  await createRequestStore(redis, keys, { ttlSeconds: 600 }).create(requestId, fv.id, fv.versionId);
  return {
    requestId,
    functionId: fv.id,
    versionId: fv.versionId,
    input: { kind: 'json', contentType: 'application/json', value: { x: 1 } },
    headers: {},
  };
}

/** Listens on a free loopback port; closed after the test. */
async function listen(s: net.Server): Promise<URL> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => s.close(r)));
  const address = s.address();
  return new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
}

async function closedPort(): Promise<URL> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const address = s.address();
  await new Promise((r) => s.close(r));
  return new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
}

const problemOf = async (processor: InvocationProcessor, job: InvocationJob, attempt: number) => {
  const result = await processor(job, { attempt, maxAttempts: 3, queuedAt: Date.now() });
  return { status: result?.status, body: JSON.parse(result?.body.toString('utf8') ?? '{}') as Record<string, unknown> };
};
const CONNECTION_ERROR = {
  type: 'urn:inference-connection:problem-details:internal-server-error',
  detail: 'Inference connection error while making inference request',
};

describe('container processor: a server that cannot be reached', () => {
  it('is tried again while the request never reached it (connection refused), then answered 500', async () => {
    const processor = await processorFor(await closedPort());
    const job = await newJob();
    await expect(processor(job, { attempt: 1, maxAttempts: 3, queuedAt: Date.now() })).rejects.toBeInstanceOf(
      InferenceConnectionError,
    );
    await expect(processor(job, { attempt: 2, maxAttempts: 3, queuedAt: Date.now() })).rejects.toBeInstanceOf(
      InferenceConnectionError,
    );
    expect(await problemOf(processor, job, 3)).toMatchObject({ status: 500, body: CONNECTION_ERROR });
  });

  it('is tried again while its server is not up, then answered 500', async () => {
    const processor = await processorFor(await closedPort(), { healthy: false });
    const job = await newJob();
    await expect(processor(job, { attempt: 1, maxAttempts: 3, queuedAt: Date.now() })).rejects.toThrow(/not up/);
    expect(await problemOf(processor, job, 3)).toMatchObject({ status: 500, body: CONNECTION_ERROR });
  });

  it('is not tried again once the request reached the server (a reset), and says so', async () => {
    let connections = 0;
    const resetting = net.createServer((socket) => {
      connections++;
      // The request arrives, then the connection is reset: the server may have acted on it.
      socket.once('data', () => socket.resetAndDestroy());
    });
    const processor = await processorFor(await listen(resetting));
    expect(await problemOf(processor, await newJob(), 1)).toMatchObject({ status: 500, body: CONNECTION_ERROR });
    expect(connections).toBe(1);
  });

  it('is not tried again when it does not answer in time', async () => {
    let requests = 0;
    const silent = http.createServer(() => {
      requests++;
    });
    closers.push(async () => silent.closeAllConnections());
    const processor = await processorFor(await listen(silent), { timeoutMs: 200 });
    expect(await problemOf(processor, await newJob(), 1)).toMatchObject({ status: 500, body: CONNECTION_ERROR });
    expect(requests).toBe(1);
  });

  it('does nothing for a request already settled (a re-delivered job)', async () => {
    const processor = await processorFor(await closedPort());
    const job = await newJob();
    await createRequestStore(redis, keys, { ttlSeconds: 600 }).complete(
      job.requestId,
      successResult({ contentType: 'text/plain', body: Buffer.from('done') }),
    );
    expect(await processor(job, { attempt: 1, maxAttempts: 3, queuedAt: Date.now() })).toBeUndefined();
  });
});

describe('container processor: trace context', () => {
  it('sends the worker’s span as traceparent in place of the client’s (tracing on), the client’s otherwise', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const echo = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    closers.push(async () => echo.closeAllConnections());
    const base = await listen(echo);
    const client = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, tracestate: 'client=1' };
    const worker = `00-${'a'.repeat(32)}-${'c'.repeat(16)}-01`;
    const job = { ...(await newJob()), headers: client };
    const traced = await processorFor(base, { traceContext: () => ({ traceparent: worker }) });
    expect((await traced(job, { attempt: 1, maxAttempts: 3, queuedAt: Date.now() }))?.status).toBe(200);
    const plain = await processorFor(base);
    expect(
      (await plain({ ...(await newJob()), headers: client }, { attempt: 1, maxAttempts: 3, queuedAt: Date.now() }))
        ?.status,
    ).toBe(200);
    expect(seen.map((h) => [h.traceparent, h.tracestate])).toEqual([
      [worker, undefined],
      [client.traceparent, client.tracestate],
    ]);
  });
});
