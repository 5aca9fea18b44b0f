#!/usr/bin/env node
/** `nvcf`: the NVCF API from the command line. `nvcf --help` for commands, configuration and exit codes. */
import { enableCompileCache } from 'node:module';

// Stripping the types of and compiling the CLI's and the SDK's modules costs more than most commands do: Node keeps
// both in its on-disk compile cache (in the OS temp directory), which halves every later start.
enableCompileCache();

// A reader that goes away (`nvcf functions list | head -1`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const { run } = await import('./run.ts');
// Nothing may keep the process alive once the command is done: an aborted call's socket, a progress timer.
process.exit(await run(process.argv));
