import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from '@nvcf/service-kit';
import { type ServerSandbox, sandboxedCommand } from './server-sandbox.ts';

export interface ServerProcessOptions {
  /** The function's `containerArgs`, run by `sh -c` (a shell: quoting and `$PORT` work as in a compose command). */
  command: string;
  /** The process's whole environment (the worker's own is not inherited: it holds Redis and storage credentials). */
  env: Record<string, string>;
  /** Its user and confinement: a tenant's server is never the worker (server-sandbox.ts). */
  sandbox: ServerSandbox;
  log: Logger;
  /** The process ended without being asked to (it is started again after a backoff). */
  onExit(): void;
}

export interface ServerProcess {
  readonly pid: number | undefined;
  /** Health passed: the next crash restarts it after the shortest backoff again. */
  healthy(): void;
  /** Stops it (SIGTERM to its process group, SIGKILL after `graceMs`), and never restarts it. */
  stop(graceMs?: number): Promise<void>;
}

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/**
 * Process groups of the servers running now. A server runs in its own group (so that stopping it stops what its
 * shell started), which also means it would outlive a worker that exits without stopping it: one exit hook per
 * process kills whatever is left. (A SIGKILLed worker runs no hook; its servers are orphaned until stopped.)
 */
const running = new Set<number>();
let exitHook = false;
function track(pid: number): void {
  running.add(pid);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const group of running) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
}

/**
 * A container function's server as a child process (process mode: development and tests, no container engine).
 * Started in its own process group so that stopping it also stops what its shell started; restarted with an
 * exponential backoff whenever it exits, until stopped. Its output goes to the worker's log, one line per record.
 */
export function startServerProcess(opts: ServerProcessOptions): ServerProcess {
  let child: ChildProcess | undefined;
  let stopped = false;
  let restarts = 0;
  let backoffMs = MIN_BACKOFF_MS;
  let timer: NodeJS.Timeout | undefined;
  let exited: Promise<void> = Promise.resolve();
  /** Every process holding its output is gone ('close'): only then may its group id be someone else's. */
  let closed = true;

  const launch = () => {
    const { file, args } = sandboxedCommand(opts.sandbox, opts.command);
    // Detached: a session and process group of its own, without the worker's controlling terminal.
    const proc = spawn(file, args, {
      env: opts.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.sandbox.user ?? {}),
    });
    child = proc;
    closed = false;
    const pid = proc.pid;
    if (pid !== undefined) track(pid);
    for (const [name, stream] of [
      ['stdout', proc.stdout],
      ['stderr', proc.stderr],
    ] as const) {
      createInterface({ input: stream }).on('line', (line) => opts.log.info({ stream: name }, line));
    }
    exited = new Promise((resolve) => {
      proc.on('error', (err) => opts.log.error({ err }, 'inference server process failed to start'));
      proc.on('close', (code, signal) => {
        closed = true;
        if (pid !== undefined) running.delete(pid);
        resolve();
        if (stopped) return;
        opts.log.warn(
          { code, signal, restarts, restartInMs: backoffMs },
          'inference server process exited; restarting it',
        );
        opts.onExit();
        timer = setTimeout(() => {
          restarts++;
          launch();
        }, backoffMs);
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      });
    });
  };
  launch();

  const signalGroup = (signal: NodeJS.Signals) => {
    const pid = child?.pid;
    // Not the leader's exit: a sandbox's leader (bwrap) may be gone while the server it started still runs.
    if (pid === undefined || closed) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };

  return {
    get pid() {
      return child?.pid;
    },
    healthy() {
      backoffMs = MIN_BACKOFF_MS;
    },
    async stop(graceMs = 5_000) {
      stopped = true;
      clearTimeout(timer);
      signalGroup('SIGTERM');
      const killer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(killer);
    },
  };
}
