/**
 * Test support: `nvcf` as a user runs it, a process of its own: plainly (stdout and stderr are pipes), or on a
 * pseudo-terminal (util-linux `script`, so stdout and stderr are a TTY and the CLI draws tables and progress).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

export const CLI = resolve(import.meta.dirname, '../main.ts');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running CLI: its output so far, a wait for some of it, its end. */
export interface RunningCli {
  child: ChildProcess;
  /** stdout (on a terminal: everything the terminal showed). */
  output(): string;
  stderr(): string;
  /** Resolves once the output matches, with the output; rejects if the process ends first or 30 s pass. */
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<CliResult>;
}

/** Only what the CLI is given: no developer's NVCF_* variables or config file leak into a test. */
function cliEnv(env: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NVCF_CONFIG: join(process.env.TMPDIR ?? '/tmp', 'nvcf-cli-test-no-config.json'),
    ...env,
  };
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

function track(child: ChildProcess): RunningCli {
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const w of waiters) w();
  };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    changed();
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    changed();
  });
  const exited = new Promise<CliResult>((r) =>
    child.on('close', (code) => {
      r({ code, stdout, stderr });
      changed();
    }),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    output: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(stdout)) {
            cleanup();
            resolve(stdout);
          } else if (done) {
            cleanup();
            reject(new Error(`the CLI ended without printing ${pattern}:\n${stdout}\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${pattern} within 30 s:\n${stdout}\n${stderr}`));
        }, 30_000);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** `node main.ts …args` with pipes for stdin, stdout and stderr. */
export function startCli(args: string[], env: Record<string, string>): RunningCli {
  return track(spawn(process.execPath, [CLI, ...args], { env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }));
}

/** Runs the CLI to its end; `input` is written to its stdin. */
export async function runCli(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  const cli = startCli(args, env);
  cli.child.stdin?.end(input);
  return cli.exited;
}

/**
 * The CLI on a pseudo-terminal (`script -qec`): stdout and stderr are one TTY, whose output comes back as this
 * process's stdout. Writing `\x03` to stdin is a Ctrl-C typed at that terminal. `script -e` exits with the CLI's code.
 */
export function startCliInTerminal(args: string[], env: Record<string, string>): RunningCli {
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return track(
    spawn('script', ['-qec', command, '/dev/null'], {
      // A fixed width, so a table is never wrapped by a narrow default.
      env: { ...cliEnv(env), COLUMNS: '200', LINES: '50', TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
}
