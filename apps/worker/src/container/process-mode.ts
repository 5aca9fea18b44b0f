import { spawnSync } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import type { Logger } from '@nvcf/service-kit';
import type { WorkerConfig } from '../config.ts';
import { describeProcessTrust, type ProcessTrust } from './process-trust.ts';
import { resolveSandbox, type ServerSandbox } from './server-sandbox.ts';

export interface ProcessMode {
  trust: ProcessTrust;
  sandbox: ServerSandbox;
}

/**
 * Process mode as configured: whose commands run, as whom, in what sandbox. The container work dir is where
 * servers read assets and write outputs, so with a user of their own it must be traversable by them (0711: they
 * reach their request's directories by name but cannot list the others). Says so in one warning line at start:
 * this worker runs code that function owners wrote, on its own host.
 */
export async function openProcessMode(config: WorkerConfig, log: Logger): Promise<ProcessMode> {
  const { user, workDir } = config.container;
  const trust: ProcessTrust = { versionIds: config.functionVersionIds, ncaId: config.ncaId };
  if (!config.container.processes || config.container.url) return { trust, sandbox: { kind: 'none', writable: [] } };
  await mkdir(workDir, { recursive: true });
  if (user) {
    await chmod(workDir, 0o711);
    // A private parent (a mkdtemp directory, a home) would leave every server without its assets and outputs.
    if (spawnSync('test', ['-x', workDir], { ...user, stdio: 'ignore' }).status !== 0) {
      throw new Error(
        `WORKER_CONTAINER_WORK_DIR '${workDir}' cannot be reached by WORKER_CONTAINER_USER (uid ${user.uid}): a directory above it is not searchable by that user`,
      );
    }
  }
  const sandbox = resolveSandbox(config.container.sandbox, user, [workDir]);
  log.warn(
    {
      trusts: describeProcessTrust(trust),
      user: user ? `${user.uid}:${user.gid}` : `the worker's own (uid ${process.getuid?.()})`,
      sandbox: sandbox.kind,
    },
    sandbox.kind === 'bwrap'
      ? 'container process mode: this worker runs the containerArgs of the functions it trusts on its host, sandboxed by bubblewrap'
      : "container process mode: this worker runs the containerArgs of the functions it trusts on its host, without a sandbox (servers of one user can read each other's environment; install bubblewrap)",
  );
  return { trust, sandbox };
}
