/** Parsers for commander options: a bad value is commander's usage error (exit 2), said before anything is sent. */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './errors.ts';

/** A repeatable option: `--input a --input b`. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `a,b,c` (also repeatable: `--scopes a --scopes b,c`). */
export const commaList = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    }
    return n;
  };
}

/** A JSON document from `--file PATH` (`-` for stdin). */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path === '-' ? 'stdin' : path} is not JSON: ${(err as Error).message}`);
  }
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
