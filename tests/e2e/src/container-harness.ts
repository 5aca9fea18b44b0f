import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ServerRuntime, serverRuntime, serverUserEnv } from '@nvcf/testing';
import { expect } from 'vitest';
import { gfetch } from './harness.ts';

/** The example inference server (examples/echo-server), run by this Node as a container function's command. */
export const ECHO_SERVER = resolve(import.meta.dirname, '../../../examples/echo-server/server.ts');
const ECHO_PACKAGE = resolve(import.meta.dirname, '../../../examples/echo-server/package.json');

/** This Node and the echo server where a server running as another user can read them. */
export const echoRuntime = (): Promise<ServerRuntime> => serverRuntime([ECHO_SERVER, ECHO_PACKAGE]);
export const echoCommand = (runtime: ServerRuntime) => runtime.command(ECHO_SERVER);

/**
 * A worker in process mode with `workDir` as its container work dir, its servers under a user of their own when
 * the test runs as root, in bubblewrap where it works (the default).
 */
export const processModeEnv = (workDir: string): Record<string, string> => ({
  WORKER_CONTAINER_PROCESSES: 'true',
  WORKER_CONTAINER_WORK_DIR: workDir,
  ...serverUserEnv(),
});

/**
 * A directory a server may write gate files into: inside the work dir (the only place a sandboxed server may
 * write), open to the server's user.
 */
export async function serverWritableDir(workDir: string, name: string): Promise<string> {
  const path = join(workDir, name);
  await mkdir(path, { recursive: true });
  await chmod(path, 0o777);
  // The worker makes its work dir traversable when it starts; a test may make this one first.
  await chmod(workDir, 0o711);
  return path;
}

export interface CreatedVersion {
  id: string;
  versionId: string;
}

/** Registers a function (any body), expecting 200. */
export async function createFunction(base: string, body: object): Promise<CreatedVersion> {
  const res = await gfetch(`${base}/v2/nvcf/functions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { function: CreatedVersion }).function;
}

/**
 * Deploys a version with `maxRequestConcurrency`, expecting 200. `minInstances: 0`: invocable while its server
 * restarts (requests wait in the queue), ACTIVE while a worker serves it.
 */
export async function deploy(base: string, fv: CreatedVersion, maxRequestConcurrency = 4): Promise<void> {
  const res = await gfetch(`${base}/v2/nvcf/deployments/functions/${fv.id}/versions/${fv.versionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      deploymentSpecifications: [
        { gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1, maxRequestConcurrency },
      ],
    }),
  });
  expect(res.status, await res.text()).toBe(200);
}

export async function statusOf(base: string, fv: CreatedVersion): Promise<string> {
  const res = await gfetch(`${base}/v2/nvcf/functions/${fv.id}/versions/${fv.versionId}`);
  return ((await res.json()) as { function: { status: string } }).function.status;
}

/** Waits (generously: a process starts on a busy machine) until `check` holds. */
export async function until(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A temporary directory a test removes when done. */
export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
