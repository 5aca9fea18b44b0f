import { chmod, copyFile, link, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** A user a root test process hands container servers to (Debian's `nobody`). */
export const SERVER_USER = '65534:65534';

/**
 * The worker settings that let a test run container functions in process mode: as root, a user of the servers'
 * own (the worker refuses process mode as root without one); otherwise none (the worker's own user).
 */
export function serverUserEnv(): Record<string, string> {
  return process.getuid?.() === 0 ? { WORKER_CONTAINER_USER: SERVER_USER } : {};
}

export interface ServerRuntime {
  /** The directory: readable and searchable by every user. */
  dir: string;
  /** A shell command (a `containerArgs`) that runs `file` (one of those copied) with this Node. */
  command(file: string): string;
  remove(): Promise<void>;
}

/**
 * This Node and some scripts (paths to copy, or files to write) in a directory every user can read: a container server that runs as another user
 * cannot reach a Node installed under `/root`, nor a checkout inside a private temporary directory. The Node
 * binary is hard-linked where it can be (same filesystem), copied otherwise.
 */
export async function serverRuntime(
  files: readonly (string | { name: string; text: string })[],
): Promise<ServerRuntime> {
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-server-runtime-'));
  await chmod(dir, 0o755);
  const node = join(dir, 'node');
  await link(process.execPath, node).catch(() => copyFile(process.execPath, node));
  await chmod(node, 0o755);
  for (const file of files) {
    const target = join(dir, typeof file === 'string' ? basename(file) : file.name);
    if (typeof file === 'string') await copyFile(file, target);
    else await writeFile(target, file.text);
    await chmod(target, 0o644);
  }
  return {
    dir,
    command: (file) => `'${node}' '${join(dir, basename(file))}'`,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
