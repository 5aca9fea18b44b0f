import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_USER } from '@nvcf/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkerConfig } from '../config.ts';
import { openProcessMode } from './process-mode.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-process-mode-'));
  // Searchable: the servers' user must reach the work dir inside it.
  await chmod(dir, 0o711);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A logger whose lines the test reads. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('process mode at start', () => {
  it('says in one warning line what it trusts, as whom, in which sandbox; the work dir is traversable, not listable', async () => {
    const workDir = join(dir, 'work');
    const config = loadWorkerConfig({
      WORKER_CONTAINER_PROCESSES: 'true',
      WORKER_CONTAINER_WORK_DIR: workDir,
      WORKER_CONTAINER_USER: process.getuid?.() === 0 ? SERVER_USER : '',
      WORKER_CONTAINER_SANDBOX: 'bwrap',
      NVCF_NCA_ID: 'operators',
    });
    const { log, lines } = capture();
    const mode = await openProcessMode(config, log);
    expect(mode.sandbox.kind).toBe('bwrap');
    expect(mode.trust).toEqual({ versionIds: [], ncaId: 'operators' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      trusts: "the functions of account 'operators' (NVCF_NCA_ID) only",
      sandbox: 'bwrap',
      msg: expect.stringContaining('container process mode'),
    });
    if (process.getuid?.() === 0) {
      expect(lines[0]?.user).toBe(SERVER_USER);
      expect((await stat(workDir)).mode & 0o777).toBe(0o711);
    }

    const named = '0b6e1a8e-4a51-4c2a-9d0c-1f2e3d4c5b6a';
    const quiet = capture();
    const versions = await openProcessMode(
      { ...config, functionVersionIds: [named], container: { ...config.container, sandbox: 'none' } },
      quiet.log,
    );
    expect(versions.sandbox.kind).toBe('none');
    expect(quiet.lines[0]).toMatchObject({ trusts: expect.stringContaining(named), sandbox: 'none' });
    expect(quiet.lines[0]?.msg).toMatch(/without a sandbox/);
  });

  // Only a root worker switches users (CI runs as root; elsewhere the servers are the worker's own user).
  it.runIf(process.getuid?.() === 0)('refuses a work dir its servers cannot reach, saying which', async () => {
    const hidden = join(dir, 'private');
    await mkdir(hidden, { mode: 0o700 });
    const config = loadWorkerConfig({
      WORKER_CONTAINER_PROCESSES: 'true',
      WORKER_CONTAINER_WORK_DIR: join(hidden, 'work'),
      WORKER_CONTAINER_USER: SERVER_USER,
    });
    await expect(openProcessMode(config, capture().log)).rejects.toThrow(/cannot be reached by WORKER_CONTAINER_USER/);
  });

  it('logs nothing and makes nothing when the worker runs no container processes', async () => {
    const workDir = join(dir, 'unused');
    const { log, lines } = capture();
    await openProcessMode(loadWorkerConfig({ WORKER_CONTAINER_WORK_DIR: workDir }), log);
    expect(lines).toEqual([]);
    await expect(stat(workDir)).rejects.toThrow(/ENOENT/);
  });
});
