import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFunction, deploy, statusOf, tempDir, until } from './container-harness.ts';
import { createHarness, gfetch, type Harness, pexec, simpleRequest } from './harness.ts';

let h: Harness;
let gw: RunningGateway;
let work: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  h = await createHarness();
  work = await tempDir('nvcf-sidecar-work-');
  gw = await h.gateway();
}, 60_000);
afterAll(async () => {
  await h?.close();
  await work?.remove();
});

describe('container functions: sidecar mode', () => {
  it("serves a PREDICT_V2 container function whose server is another worker's KServe port, through pexec", async () => {
    // The inference container: one of our workers, its KServe V2 HTTP port the server's address.
    const server = await h.worker();
    const fv = await createFunction(gw.url, {
      name: 'kserve-container',
      inferenceUrl: '/v2/models/simple/infer',
      inferencePort: server.ports.http,
      healthUri: '/v2/health/ready',
      containerImage: 'nvcf/worker:dev',
      apiBodyFormat: 'PREDICT_V2',
    });
    await deploy(gw.url, fv);
    // The worker beside it (a sidecar): told the server's address, serving this version only.
    await h.worker({
      WORKER_CONTAINER_URL: `http://127.0.0.1:${server.ports.http}`,
      WORKER_FUNCTION_VERSIONS: fv.versionId,
      WORKER_CONTAINER_WORK_DIR: work.path,
      KSERVE_HTTP_PORT: '-1',
      KSERVE_GRPC_PORT: '-1',
      METRICS_PORT: '-1',
    });
    await until(async () => (await statusOf(gw.url, fv)) === 'ACTIVE', 'the container function to be ACTIVE');
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fv.id}`, simpleRequest(), {
      'nvcf-poll-seconds': '60',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { model_name: string; outputs: { name: string; data: number[] }[] };
    expect(body.model_name).toBe('simple');
    const sum = body.outputs.find((o) => o.name === 'OUTPUT0');
    expect(sum?.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));

    // The server's own errors come back as NVCF maps them: KServe's `{"error"}` is the detail.
    const bad = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fv.id}`, { inputs: [] }, { 'nvcf-poll-seconds': '60' });
    expect(bad.status).toBe(400);
    const problem = (await bad.json()) as { type: string; detail: string };
    expect(problem.type).toBe('urn:inference-service:problem-details:bad-request');
    expect(problem.detail).not.toBe('Inference error');
  });

  it('answers a server that refuses connections with a 500 inference-connection problem', async () => {
    const health = await h.worker();
    const closed = await closedPort();
    // Healthy (its health check answers on another port), but nothing listens on its inference port.
    const fv = await createFunction(gw.url, {
      name: 'refusing-container',
      inferenceUrl: '/v2/models/simple/infer',
      inferencePort: closed,
      health: {
        protocol: 'HTTP',
        uri: '/v2/health/ready',
        port: health.ports.http,
        timeout: 'PT5S',
        expectedStatusCode: 200,
      },
      containerImage: 'nvcf/worker:dev',
    });
    await deploy(gw.url, fv);
    await h.worker({
      WORKER_CONTAINER_URL: 'http://127.0.0.1',
      WORKER_FUNCTION_VERSIONS: fv.versionId,
      WORKER_CONTAINER_WORK_DIR: work.path,
      KSERVE_HTTP_PORT: '-1',
      KSERVE_GRPC_PORT: '-1',
      METRICS_PORT: '-1',
    });
    await until(async () => (await statusOf(gw.url, fv)) === 'ACTIVE', 'the refusing function to be ACTIVE');
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fv.id}`, simpleRequest(), {
      'nvcf-poll-seconds': '60',
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({
      type: 'urn:inference-connection:problem-details:internal-server-error',
      detail: 'Inference connection error while making inference request',
    });
  });
});

describe('container functions: a sidecar’s secrets', () => {
  it('writes the version’s secrets.json (0600) into WORKER_SECRETS_DIR, rewrites it on a PUT, removes it on undeploy', async () => {
    const server = await h.worker();
    const fv = await createFunction(gw.url, {
      name: 'sidecar-secrets',
      inferenceUrl: '/v2/models/simple/infer',
      inferencePort: server.ports.http,
      healthUri: '/v2/health/ready',
      containerImage: 'nvcf/worker:dev',
      apiBodyFormat: 'PREDICT_V2',
      secrets: [{ name: 'TOKEN', value: 'first-sidecar-value' }],
    });
    await deploy(gw.url, fv);
    const dir = join(work.path, 'secrets');
    await h.worker({
      WORKER_CONTAINER_URL: `http://127.0.0.1:${server.ports.http}`,
      WORKER_FUNCTION_VERSIONS: fv.versionId,
      WORKER_CONTAINER_WORK_DIR: work.path,
      WORKER_SECRETS_DIR: dir,
      KSERVE_HTTP_PORT: '-1',
      KSERVE_GRPC_PORT: '-1',
      METRICS_PORT: '-1',
    });
    const file = join(dir, 'secrets.json');
    const content = async () => (existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : undefined);
    await until(async () => (await content()) !== undefined, 'the secrets file');
    expect(await content()).toEqual({ TOKEN: 'first-sidecar-value' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await until(async () => (await statusOf(gw.url, fv)) === 'ACTIVE', 'the function to be ACTIVE');

    const put = await gfetch(`${gw.url}/v2/nvcf/secrets/functions/${fv.id}/versions/${fv.versionId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        secrets: [
          { name: 'TOKEN', value: 'second' },
          { name: 'MORE', value: 'x' },
        ],
      }),
    });
    expect(put.status).toBe(200);
    await until(async () => (await content())?.TOKEN === 'second', 'the rewritten secrets file');
    expect(await content()).toEqual({ TOKEN: 'second', MORE: 'x' });

    const undeploy = await gfetch(`${gw.url}/v2/nvcf/deployments/functions/${fv.id}/versions/${fv.versionId}`, {
      method: 'DELETE',
    });
    expect(undeploy.status).toBe(200);
    await until(async () => !existsSync(file), 'the secrets file to be removed');
  });
});

/** A TCP port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  return typeof address === 'object' && address ? address.port : 0;
}
