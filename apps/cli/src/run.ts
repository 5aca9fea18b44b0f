import { CommanderError } from 'commander';
import { exitCodeFor, formatError } from './errors.ts';
import { createProgram } from './program.ts';

/** Runs one command line and says how the process should exit (see EXIT). */
export async function run(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    // Commander has already printed its own usage errors (and help, and the version).
    if (!(err instanceof CommanderError)) process.stderr.write(`${formatError(err)}\n`);
    return exitCodeFor(err);
  }
}
