import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

/** A Node script running as a child process, with the tail of its stderr kept for error reports. */
export interface NodeChild {
  name: string;
  pid: number;
  child: ChildProcess;
  /** Resolves with the first stdout line matching `pattern`; rejects if the child exits first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Rejects when the child exits before `stop()`: race it against readiness waits. */
  readonly died: Promise<never>;
  stderrTail(): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_BYTES = 4096;

/**
 * `logFile`: the child's stdout (its pino log) goes straight to that file, as a deployment would log,
 * instead of through a pipe this process would spend CPU draining while it generates load.
 */
export function spawnNode(name: string, script: string, env: Record<string, string>, logFile?: string): NodeChild {
  const logFd = logFile ? openSync(logFile, 'a') : undefined;
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', logFd ?? 'pipe', 'pipe'],
  });
  if (logFd !== undefined) closeSync(logFd);
  if (child.pid === undefined) throw new Error(`${name}: spawn failed`);
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    tail = (tail + s).slice(-TAIL_BYTES);
  });
  // stdout carries the children's pino logs: drained (a full pipe would block them), not kept.
  let stdoutListeners: ((line: string) => void)[] = [];
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (s: string) => {
    if (stdoutListeners.length === 0) return;
    const lines = (partial + s).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) for (const l of stdoutListeners) l(line);
  });

  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never settles when the exit was asked for; rejects (with the stderr tail) when it was not.
  const died = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => {
      if (!stopping) reject(new Error(`${name} exited unexpectedly (code ${code}, signal ${signal})\n${tail}`));
    });
  });
  died.catch(() => {}); // observed only by whoever races it
  const running = () => child.exitCode === null && child.signalCode === null;

  return {
    name,
    pid: child.pid,
    child,
    died,
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        const onLine = (line: string) => {
          if (pattern.test(line)) done(undefined, line);
        };
        const done = (err?: Error, line?: string) => {
          clearTimeout(timer);
          stdoutListeners = stdoutListeners.filter((l) => l !== onLine);
          if (err) reject(err);
          else resolve(line as string);
        };
        stdoutListeners.push(onLine);
        died.catch((err: Error) => done(err));
      });
    },
    stderrTail: () => tail,
    async stop(graceMs = 5000) {
      stopping = true;
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (running()) child.kill('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
