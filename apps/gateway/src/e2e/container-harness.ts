import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { gfetch } from './harness.ts';

/** The example inference server (examples/echo-server), run by this Node as a container function's command. */
export const ECHO_SERVER = resolve(import.meta.dirname, '../../../../examples/echo-server/server.ts');
export const echoCommand = () => `'${process.execPath}' '${ECHO_SERVER}'`;

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
