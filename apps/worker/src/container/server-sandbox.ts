import { spawnSync } from 'node:child_process';

/** The user a container function's server runs as (never the worker's own where the worker is root). */
export interface ServerUser {
  uid: number;
  gid: number;
}

/**
 * How process mode confines a server. `bwrap` (Debian's bubblewrap): its own PID, IPC and UTS namespaces (it
 * sees neither the worker nor a sibling server, so no `/proc/<pid>/environ` to read), no capabilities, the host's
 * filesystem read-only but for the worker's container work dir, and it dies with the worker. `none`: a plain
 * child process, confined only by its user.
 */
export type SandboxKind = 'bwrap' | 'none';

export interface ServerSandbox {
  kind: SandboxKind;
  /** Absent: the worker's own user (a worker that is not root cannot switch). */
  user?: ServerUser;
  /** The directories a server may write (the worker's container work dir: assets, large outputs, its home). */
  writable: readonly string[];
}

/** The program and arguments that run `command` (a shell string, as a compose `command:`) in the sandbox. */
export function sandboxedCommand(sandbox: ServerSandbox, command: string): { file: string; args: string[] } {
  if (sandbox.kind === 'none') return { file: 'sh', args: ['-c', command] };
  return { file: 'bwrap', args: [...bwrapArgs(sandbox.writable), '--', 'sh', '-c', command] };
}

function bwrapArgs(writable: readonly string[]): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    // A /proc of its own PID namespace: the worker's and the other servers' processes are not in it.
    '--proc',
    '/proc',
    ...writable.flatMap((dir) => ['--bind', dir, dir]),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
  ];
}

/**
 * Whether bubblewrap runs here as `user` (it needs unprivileged user namespaces when not run as root): one
 * trial run at start, so that `auto` falls back with a warning rather than every server failing to start.
 */
export function bwrapWorks(user: ServerUser | undefined, writable: readonly string[]): boolean {
  const { file, args } = sandboxedCommand({ kind: 'bwrap', writable }, 'exit 0');
  const r = spawnSync(file, args, { stdio: 'ignore', timeout: 10_000, ...(user ?? {}) });
  return r.status === 0;
}

/**
 * The sandbox a setting asks for: `auto` takes bubblewrap where it works, `bwrap` requires it, `none` never.
 *
 * @throws Error when `bwrap` is asked for and does not work here
 */
export function resolveSandbox(
  setting: 'auto' | SandboxKind,
  user: ServerUser | undefined,
  writable: readonly string[],
): ServerSandbox {
  const base = { ...(user ? { user } : {}), writable };
  if (setting === 'none') return { kind: 'none', ...base };
  if (bwrapWorks(user, writable)) return { kind: 'bwrap', ...base };
  if (setting === 'bwrap') {
    throw new Error(
      'WORKER_CONTAINER_SANDBOX=bwrap, but bubblewrap does not run here (install it: apt-get install bubblewrap; as a user other than root it needs unprivileged user namespaces)',
    );
  }
  return { kind: 'none', ...base };
}
