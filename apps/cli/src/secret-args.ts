import { readFile } from 'node:fs/promises';
import type { Secret } from '@nvcf/client';
import { readStdin } from './args.ts';
import { UsageError } from './errors.ts';

/** Where a value that is not on the command line comes from (injectable for tests). */
export interface SecretSources {
  file(path: string): Promise<string>;
  stdin(): Promise<string>;
}

const realSources: SecretSources = { file: (path) => readFile(path, 'utf8'), stdin: readStdin };

/** A file's or stdin's text without the one newline an editor or `echo` ends it with. */
const chomp = (text: string) => text.replace(/\r?\n$/, '');

/**
 * `NAME=VALUE`, `NAME=@FILE` (the file's text) and `NAME=-` (stdin, once) as secrets, each name once. A value from
 * a file or stdin stays out of the shell's history and the process list.
 */
export async function parseSecretArgs(args: readonly string[], sources = realSources): Promise<Secret[]> {
  const secrets: Secret[] = [];
  let stdinUsed = false;
  for (const arg of args) {
    const at = arg.indexOf('=');
    if (at < 1) throw new UsageError(`a secret is NAME=VALUE, NAME=@FILE or NAME=-, not '${arg.slice(0, 64)}'`);
    const name = arg.slice(0, at);
    const given = arg.slice(at + 1);
    if (secrets.some((s) => s.name === name)) throw new UsageError(`secret '${name}' is given more than once`);
    let value = given;
    if (given === '-') {
      if (stdinUsed) throw new UsageError('only one secret can be read from stdin (NAME=-)');
      stdinUsed = true;
      value = chomp(await sources.stdin());
    } else if (given.startsWith('@')) {
      value = chomp(await sources.file(given.slice(1)));
    }
    secrets.push({ name, value });
  }
  return secrets;
}
