import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createFunctionRegistry } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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
import { accountKey, createHarness, type Harness } from './harness.ts';

/**
 * A hostile second account against container functions: its `containerArgs` must never run on a shared worker
 * host, and no `inferenceUrl` or health URI may aim a worker at another address (issue: tenant isolation).
 */
let h: Harness;
let gw: RunningGateway;
let work: Awaited<ReturnType<typeof tempDir>>;
let runtime: Awaited<ReturnType<typeof echoRuntime>>;
/** A directory any server may write: where an attacker's command would leave its proof. */
let open: string;
/** team-b's own admin: every scope, in its own account. */
let teamB: string;
/** Something on the worker's network that no function should reach: it counts what reaches it. */
let internal: Server;
let internalHits = 0;

beforeAll(async () => {
  h = await createHarness();
  work = await tempDir('nvcf-tenant-containers-');
  open = await serverWritableDir(work.path, 'open');
  runtime = await echoRuntime();
  gw = await h.gateway();
  teamB = await accountKey(gw.url, 'team-b');
  internal = createServer((_req, reply) => {
    internalHits++;
    reply.end('internal');
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  await h.worker(processModeEnv(work.path));
}, 120_000);
afterAll(async () => {
  await h?.close();
  internal?.close();
  await work?.remove();
  await runtime?.remove();
});

const asTeamB = (path: string, method: string, body?: object) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${teamB}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
const internalPort = () => (internal.address() as AddressInfo).port;

describe('tenant isolation: container processes', () => {
  it("never runs another account's containerArgs on a process-mode worker; runs the operator's", async () => {
    const pwned = join(open, 'pwned');
    // What an attacker deploys: a shell on the worker host that copies the worker's environment out.
    const attack = `id > '${pwned}'; cat /proc/$PPID/environ >> '${pwned}'; ${echoCommand(runtime)}`;
    const created = await asTeamB('/v2/nvcf/functions', 'POST', {
      name: 'innocent',
      inferenceUrl: '/echo',
      healthUri: '/health',
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: attack,
    });
    expect(created.status, await created.clone().text()).toBe(200);
    const theirs = ((await created.json()) as { function: { id: string; versionId: string } }).function;
    const deployed = await asTeamB(`/v2/nvcf/deployments/functions/${theirs.id}/versions/${theirs.versionId}`, 'POST', {
      deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1 }],
    });
    expect(deployed.status, await deployed.clone().text()).toBe(200);

    // Deployed after theirs: once the operator's is ACTIVE, the worker has weighed both.
    const mine = await createFunction(gw.url, {
      name: 'operators-own',
      inferenceUrl: '/echo',
      healthUri: '/health',
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: echoCommand(runtime),
    });
    await deploy(gw.url, mine);
    await until(async () => (await statusOf(gw.url, mine)) === 'ACTIVE', "the operator's function to be ACTIVE");

    const status = await asTeamB(`/v2/nvcf/functions/${theirs.id}/versions/${theirs.versionId}`, 'GET');
    expect(((await status.json()) as { function: { status: string } }).function.status).not.toBe('ACTIVE');
    expect(existsSync(pwned)).toBe(false);
  });
});

describe('tenant isolation: a container function reaches its own server only (SSRF)', () => {
  it('refuses an inferenceUrl or health URI that names another address, in every form', async () => {
    const port = internalPort();
    const base = { name: 'ssrf', containerImage: 'img', containerArgs: 'true' };
    for (const target of [`//127.0.0.1:${port}/x`, `/\\127.0.0.1:${port}/x`, `/\t/127.0.0.1:${port}/x`]) {
      for (const body of [
        { ...base, inferenceUrl: target },
        { ...base, inferenceUrl: '/echo', healthUri: target },
        {
          ...base,
          inferenceUrl: '/echo',
          health: { protocol: 'HTTP', uri: target, port: 8000, timeout: 'PT5S', expectedStatusCode: 200 },
        },
      ]) {
        const res = await asTeamB('/v2/nvcf/functions', 'POST', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        const problem = (await res.json()) as { detail: string };
        expect(problem.detail).toMatch(/'(inferenceUrl|healthUri)' must be/);
      }
    }
    expect(internalHits).toBe(0);
  });

  it('never serves a version stored with such a path before the gateway refused it', async () => {
    const echoFunction = (name: string) =>
      createFunction(gw.url, {
        name,
        inferenceUrl: '/echo',
        healthUri: '/health',
        containerImage: 'nvcf/echo-server:dev',
        containerArgs: echoCommand(runtime),
      });
    const first = await echoFunction('good-paths');
    await deploy(gw.url, first);
    await until(async () => (await statusOf(gw.url, first)) === 'ACTIVE', 'the first version to be ACTIVE');
    // As an older gateway stored it: the operator's own account (trusted), deployed, aimed elsewhere.
    const registry = createFunctionRegistry(h.redis, createKeys(h.keyPrefix));
    const stored = await registry.get(first.id, first.versionId);
    if (!stored?.container) throw new Error('the version was not stored as a container function');
    const legacy = {
      ...stored,
      versionId: randomUUID(),
      inferenceUrl: `//127.0.0.1:${internalPort()}/steal`,
      container: {
        ...stored.container,
        health: { ...stored.container.health, uri: `/\\127.0.0.1:${internalPort()}/h` },
      },
    };
    await registry.upsert(legacy);
    await registry.notifyChanged();
    // Deployed after the legacy version was stored: once it is ACTIVE, the worker has weighed both.
    const second = await echoFunction('good-paths-2');
    await deploy(gw.url, second);
    await until(async () => (await statusOf(gw.url, second)) === 'ACTIVE', 'the second version to be ACTIVE');
    expect(await statusOf(gw.url, { id: legacy.id, versionId: legacy.versionId })).not.toBe('ACTIVE');
    expect(internalHits).toBe(0);
  });
});
